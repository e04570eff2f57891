/// Turns trace lines into requests for ``TraceReader``, one line at a time.
package struct TraceLineParser {
    let file: String
    /// The format in force; `.auto` until the first request line decides.
    var format: TraceFormat
    var keys: [Int] = []
    var sizes: [Int] = []
    /// For CSV: whether lines carry sizes, decided by the first data line.
    var sized: Bool?
    var firstSizedLine = 0
    /// Text keys numbered in order of first appearance, told apart by their
    /// bytes: two spellings Swift `String` deems equal (canonically equivalent
    /// Unicode, or invalid UTF-8 decoded with replacement) are different keys.
    var textKeys: [[UInt8]: Int] = [:]
    var sawHeaderCandidate = false
    /// The most requests the trace may have.
    let maxRequests: Int
    /// For ``TraceFormat/strata``: its lines, header first.
    var strata: RecordedTraceParser

    init(file: String, format: TraceFormat, maxRequests: Int = Workload.limit) {
        self.file = file
        self.format = format
        self.maxRequests = maxRequests
        strata = RecordedTraceParser(file: file)
    }

    /// Adds a request, unless the trace already has ``maxRequests``.
    mutating func append(_ key: Int, line: Int) throws {
        guard keys.count < maxRequests else {
            throw TraceError.tooManyRequests(file: file, line: line, limit: maxRequests)
        }
        keys.append(key)
    }

    static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), cr = UInt8(ascii: "\r")
    static let comma = UInt8(ascii: ","), star = UInt8(ascii: "*")

    package static func isBlank(_ byte: UInt8) -> Bool { byte == space || byte == tab || byte == cr }

    package static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var lower = bytes.startIndex, upper = bytes.endIndex
        while lower < upper, isBlank(bytes[lower]) { lower += 1 }
        while upper > lower, isBlank(bytes[upper - 1]) { upper -= 1 }
        return bytes[lower..<upper]
    }

    /// A decimal integer (optional sign), or nil if the text is not one or overflows.
    package static func integer(_ bytes: ArraySlice<UInt8>) -> Int? {
        var digits = bytes[...]
        var negative = false
        if let first = digits.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int(byte - UInt8(ascii: "0"))
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            if o1 || o2 { return nil }
            value = sum
        }
        return value
    }

    /// The line quoted for an error message, shortened and with control bytes escaped.
    static func quoted(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes.prefix(40), as: UTF8.self)
        var escaped = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\"" || scalar == "\\" {
                escaped += scalar.escaped(asASCII: true)
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return "\"\(escaped)\(bytes.count > 40 ? "…" : "")\""
    }

    func malformed(_ line: Int, _ reason: String) -> TraceError {
        .malformed(file: file, line: line, reason: reason)
    }

    func textKey(_ bytes: ArraySlice<UInt8>, line: Int) throws -> ArraySlice<UInt8> {
        guard !bytes.contains(0) else { throw malformed(line, "a NUL byte in \(Self.quoted(bytes)) (is this a binary file?)") }
        return bytes
    }

    /// The number of the key with exactly these bytes.
    mutating func intern(_ key: ArraySlice<UInt8>) -> Int {
        let bytes = Array(key)
        if let id = textKeys[bytes] { return id }
        let id = textKeys.count
        textKeys[bytes] = id
        return id
    }

    /// Whether a first line's size field names a column rather than holding a
    /// bad value: a header such as `key,size`. A field that is blank or starts
    /// with a digit or sign (`1e30`, `9223372036854775808`, `-3`) is a size.
    static func isHeaderSize(_ field: ArraySlice<UInt8>) -> Bool {
        guard let first = field.first else { return false }
        let isDigit = first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")
        return !isDigit && first != UInt8(ascii: "-") && first != UInt8(ascii: "+") && !isBlank(first)
    }

    /// Reads one line (without its newline); `line` counts from 1.
    mutating func consume(_ raw: ArraySlice<UInt8>, line: Int) throws {
        let text = Self.trimmed(raw)
        if format == .strata { return try consumeStrata(raw, line: line) }
        if text.isEmpty { return }
        if format == .auto && RecordedTrace.isHeader(text) {
            format = .strata
            return try consumeStrata(raw, line: line)
        }
        if format == .auto {
            if text.count == 1 && text.first == Self.star { return }
            format = text.contains(Self.comma) ? .csv : Self.integer(text) != nil ? .lirs : .keys
        }
        switch format {
        case .auto, .strata:
            preconditionFailure("decided above")
        case .lirs:
            if text.count == 1 && text.first == Self.star { return }
            guard let key = Self.integer(text) else {
                throw malformed(line, "expected an integer key, found \(Self.quoted(text))")
            }
            try append(key, line: line)
        case .keys:
            let key = try textKey(text, line: line)
            try append(intern(key), line: line)
        case .csv:
            try consumeCSV(text, line: line)
        }
    }

    /// A strata trace's line: a get or a set is a request for its key.
    mutating func consumeStrata(_ raw: ArraySlice<UInt8>, line: Int) throws {
        guard let request = try strata.consume(raw, line: line), let key = request.key else { return }
        switch request.operation {
        case .get, .set: try append(intern(Array(key.utf8)[...]), line: line)
        case .remove, .clear: return
        }
    }

    mutating func consumeCSV(_ text: ArraySlice<UInt8>, line: Int) throws {
        let fields = text.split(separator: Self.comma, maxSplits: 2, omittingEmptySubsequences: false).map(Self.trimmed)
        guard fields.count <= 2 else {
            throw malformed(line, "expected key[,size], found more than two fields in \(Self.quoted(text))")
        }
        guard !fields[0].isEmpty else { throw malformed(line, "empty key in \(Self.quoted(text))") }
        let hasSize = fields.count == 2
        var size = 1
        if hasSize {
            guard let parsed = Self.integer(fields[1]), parsed > 0 else {
                if keys.isEmpty && !sawHeaderCandidate && Self.isHeaderSize(fields[1]) {
                    sawHeaderCandidate = true  // a header such as "key,size"
                    return
                }
                throw malformed(line, "the size must be a positive integer, found \(Self.quoted(fields[1]))")
            }
            guard parsed <= Trace.maxSize else {
                throw malformed(line, "the size must be at most \(Trace.maxSize) (2^50), found \(Self.quoted(fields[1]))")
            }
            size = parsed
        }
        switch sized {
        case nil:
            sized = hasSize
            firstSizedLine = line
        case true? where !hasSize:
            throw malformed(line, "no size, but line \(firstSizedLine) has one (give every line a size, or none)")
        case false? where hasSize:
            throw malformed(line, "a size, but line \(firstSizedLine) has none (give every line a size, or none)")
        default:
            break
        }
        let key = try textKey(fields[0], line: line)
        try append(intern(key), line: line)
        if hasSize { sizes.append(size) }
    }

    /// The trace read so far; ``TraceError/empty(file:)`` if there were no requests.
    func finish(name: String) throws -> Trace {
        guard !keys.isEmpty else { throw TraceError.empty(file: file) }
        return Trace(name: name, keys: keys, sizes: sized == true ? sizes : nil)
    }
}
