import StrataSim

/// Reads the files `load trace FILE` replays as gets: a LIRS trace (one
/// integer key per line, `*` lines skipped; key 7 is requested as `key:7`,
/// as the generated workloads name keys) or one key per line (the line's
/// text, trimmed, is the key). Plain or gzip; blank lines are skipped.
enum KeyListTrace {
    /// The most requests a file may hold here (each is kept in memory while it replays).
    static let maxRequests = 10_000_000

    /// The requests of `path`, one get per line, `rate` a second (nil: no pacing).
    static func read(path: String, rate: Int?) throws -> [RecordedRequest] {
        try parse(TraceReader().bytes(path: path), file: path, rate: rate)
    }

    /// The requests of a file's text; `file` names it in errors.
    static func parse(_ bytes: [UInt8], file path: String, rate: Int?) throws(TraceError) -> [RecordedRequest] {
        var requests: [RecordedRequest] = []
        try TraceReader.forEachLine(bytes) { (line, lineNumber) throws(TraceError) in
            let text = TraceLineParser.trimmed(line)
            if text.isEmpty || (text.count == 1 && text.first == UInt8(ascii: "*")) { return }
            if requests.isEmpty && RecordedTrace.isHeader(text) {
                throw .malformed(file: path, line: lineNumber,
                                           reason: "this is a strata trace: replay it with replay \(path)")
            }
            let key: String
            if let number = TraceLineParser.integer(text) {
                key = "key:\(number)"
            } else {
                guard let textKey = String(validating: text, as: UTF8.self) else {
                    throw TraceError.malformed(file: path, line: lineNumber, reason: "the key is not UTF-8 text")
                }
                do throws(CommandError) { try CommandParser.validate(key: textKey) } catch {
                    throw TraceError.malformed(file: path, line: lineNumber, reason: error.message)
                }
                key = textKey
            }
            guard requests.count < maxRequests else {
                throw TraceError.tooManyRequests(file: path, line: lineNumber, limit: maxRequests)
            }
            let offset = rate.map { requests.count * 1_000_000 / $0 } ?? 0
            requests.append(RecordedRequest(offsetMicroseconds: offset, .get(key: key)))
        }
        guard !requests.isEmpty else { throw .empty(file: path) }
        return requests
    }
}
