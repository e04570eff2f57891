/// The strata trace format: what `strata`'s `:record` writes and `:replay`,
/// `strata run --replay` and `strata sim` read (docs/traces.md).
///
/// ```
/// #strata-trace 1
/// # comments and blank lines are skipped
/// 0.000 get user:7
/// 12.250 set user:7 512
/// 40.000 rm user%207
/// 41.500 clear L1
/// 42.000 clear
/// ```
///
/// The first line is the header, `#strata-trace` and the format's version.
/// Each request is one line: its offset in milliseconds since the recording
/// began (at most three decimals; never less than the line before), the
/// operation, and its fields, separated by spaces or tabs. Keys and level
/// names are escaped with ``TraceKeyEscaping``.
public enum RecordedTrace {
    /// The version this strata writes and the newest it reads.
    public static let version = 1
    /// The header's first word.
    public static let magic = "#strata-trace"
    /// The first line of every trace this strata writes.
    public static var header: String { "\(magic) \(version)" }
    /// The largest `set` value size a trace may hold: 64 MiB (a replayed
    /// set writes a value this large).
    public static let maxValueSize = 64 << 20
    /// The largest offset: about 31 years, far beyond any recording.
    public static let maxOffsetMicroseconds = 1 << 50

    /// One request as a line of the format, without its newline.
    public static func line(_ request: RecordedRequest) -> String {
        let offset = request.offsetMicroseconds
        let millis = "\(offset / 1000)." + String(String(1000 + offset % 1000).dropFirst())
        return "\(millis) \(request.operation)"
    }

    /// Whether a file's first line (trimmed) is a strata trace header of any version.
    public static func isHeader(_ line: ArraySlice<UInt8>) -> Bool {
        line.starts(with: magic.utf8) && (line.count == magic.utf8.count || TraceLineParser.isBlank(line[line.startIndex + magic.utf8.count]))
    }

    /// Every request of a whole trace's text; `file` names it in errors.
    public static func parse(_ bytes: [UInt8], file: String, maxRequests: Int = Workload.limit) throws(TraceError) -> [RecordedRequest] {
        var parser = RecordedTraceParser(file: file)
        var requests: [RecordedRequest] = []
        let lines = try TraceReader.forEachLine(bytes) { (line, number) throws(TraceError) in
            if let request = try parser.consume(line, line: number) {
                guard requests.count < maxRequests else {
                    throw .tooManyRequests(file: file, line: number, limit: maxRequests)
                }
                requests.append(request)
            }
        }
        if lines == 0 { throw .empty(file: file) }
        return requests
    }

    /// The requests of the trace file at `path` (plain or gzip), read whole.
    public static func read(path: String, maxBytes: Int = TraceReader.defaultMaxBytes) throws -> [RecordedRequest] {
        try parse(TraceReader(maxBytes: maxBytes).bytes(path: path), file: path)
    }
}

/// Reads a strata trace one line at a time: the header first, then requests.
public struct RecordedTraceParser: Sendable {
    let file: String
    private var sawHeader = false
    private var lastOffset = 0

    /// A parser for the lines of `file` (named in errors).
    public init(file: String) { self.file = file }

    /// The request on a line (without its newline; `line` counts from 1), or
    /// `nil` for the header, a comment or a blank line.
    public mutating func consume(_ raw: ArraySlice<UInt8>, line: Int) throws(TraceError) -> RecordedRequest? {
        let text = TraceLineParser.trimmed(raw)
        guard sawHeader else {
            try header(text, line: line)
            sawHeader = true
            return nil
        }
        if text.isEmpty || text.first == UInt8(ascii: "#") { return nil }
        let fields = text.split(whereSeparator: TraceLineParser.isBlank)
        guard fields.count >= 2 else {
            throw malformed(line, "expected OFFSET OPERATION [KEY] [SIZE], found \(TraceLineParser.quoted(text))")
        }
        let offset = try self.offset(fields[0], line: line)
        guard offset >= lastOffset else {
            throw malformed(line, "offset \(TraceLineParser.quoted(fields[0])) is before the previous request's (offsets never go back)")
        }
        lastOffset = offset
        let operation = String(decoding: fields[1], as: UTF8.self)
        let arguments = fields.dropFirst(2)
        func key(_ usage: String, count: Int) throws(TraceError) -> String {
            guard arguments.count == count else {
                throw malformed(line, "\(operation) takes \(usage), found \(arguments.count) field\(arguments.count == 1 ? "" : "s") after it")
            }
            switch TraceKeyEscaping.unescape(arguments[arguments.startIndex]) {
            case .success(let key): return key
            case .failure(let reason): throw malformed(line, "\(reason) in \(TraceLineParser.quoted(arguments[arguments.startIndex]))")
            }
        }
        switch operation {
        case "get": return RecordedRequest(offsetMicroseconds: offset, .get(key: try key("a KEY", count: 1)))
        case "rm": return RecordedRequest(offsetMicroseconds: offset, .remove(key: try key("a KEY", count: 1)))
        case "set":
            let k = try key("a KEY and a VALUE-SIZE", count: 2)
            let field = arguments[arguments.startIndex + 1]
            guard let size = TraceLineParser.integer(field), (0...RecordedTrace.maxValueSize).contains(size),
                  field.first != UInt8(ascii: "+"), field.first != UInt8(ascii: "-") else {
                throw malformed(line, "VALUE-SIZE must be a number of bytes from 0 to \(RecordedTrace.maxValueSize), found \(TraceLineParser.quoted(field))")
            }
            return RecordedRequest(offsetMicroseconds: offset, .set(key: k, valueSize: size))
        case "clear":
            if arguments.isEmpty { return RecordedRequest(offsetMicroseconds: offset, .clear(level: nil)) }
            return RecordedRequest(offsetMicroseconds: offset, .clear(level: try key("at most one LEVEL", count: 1)))
        default:
            throw malformed(line, "unknown operation \(TraceLineParser.quoted(fields[1])) (get, set, rm or clear)")
        }
    }

    private func header(_ text: ArraySlice<UInt8>, line: Int) throws(TraceError) {
        guard RecordedTrace.isHeader(text) else {
            throw malformed(line, "expected the header \"\(RecordedTrace.header)\", found \(TraceLineParser.quoted(text))")
        }
        let rest = TraceLineParser.trimmed(text.dropFirst(RecordedTrace.magic.utf8.count))
        guard let version = TraceLineParser.integer(rest), version >= 1 else {
            throw malformed(line, "the header's version must be a whole number, found \(TraceLineParser.quoted(rest))")
        }
        guard version <= RecordedTrace.version else {
            throw malformed(line, "trace format version \(version) is newer than this strata reads (\(RecordedTrace.version))")
        }
    }

    /// `12.250` → 12250 µs: whole milliseconds, then at most three decimals.
    private func offset(_ field: ArraySlice<UInt8>, line: Int) throws(TraceError) -> Int {
        let parts = field.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        let isDigits = { (part: ArraySlice<UInt8>) in part.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }
        let fraction = parts.count == 2 ? parts[1] : []
        guard !parts[0].isEmpty, isDigits(parts[0]), isDigits(fraction), fraction.count <= 3, parts.count == 1 || !fraction.isEmpty,
              let millis = TraceLineParser.integer(parts[0]), millis <= RecordedTrace.maxOffsetMicroseconds / 1000 else {
            throw malformed(line, "OFFSET must be milliseconds such as 12 or 12.250, found \(TraceLineParser.quoted(field))")
        }
        var micros = 0
        for (index, digit) in fraction.enumerated() { micros += Int(digit - UInt8(ascii: "0")) * [100, 10, 1][index] }
        return millis * 1000 + micros
    }

    private func malformed(_ line: Int, _ reason: String) -> TraceError {
        .malformed(file: file, line: line, reason: reason)
    }
}
