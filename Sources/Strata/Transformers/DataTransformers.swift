import Foundation

/// Errors of the built-in transformers.
public enum TransformerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not text in the transformer's encoding.
    case invalidText(encoding: String)
    /// The text cannot be encoded in the transformer's encoding.
    case unencodableText(encoding: String)
    /// A formatter could not read the string.
    case unparsable(String)
    /// A formatter could not write the value.
    case unformattable(String)

    public var description: String {
        switch self {
        case .invalidText(let encoding): "bytes are not valid \(encoding) text"
        case .unencodableText(let encoding): "text cannot be encoded as \(encoding)"
        case .unparsable(let text): "cannot parse \"\(text.prefix(60))\""
        case .unformattable(let value): "cannot format \(value)"
        }
    }
}

/// `Data` ⇄ `String` in an encoding (UTF-8 by default).
public struct StringTransformer: TwoWayTransformer {
    public let encoding: String.Encoding

    public init(encoding: String.Encoding = .utf8) { self.encoding = encoding }

    public func transform(_ value: Data) async throws -> String {
        guard let text = String(data: value, encoding: encoding) else {
            throw TransformerError.invalidText(encoding: "\(encoding)")
        }
        return text
    }

    public func inverseTransform(_ value: String) async throws -> Data {
        guard let data = value.data(using: encoding) else { throw TransformerError.unencodableText(encoding: "\(encoding)") }
        return data
    }
}

/// A JSON document as plain Swift values (`[String: Any]`, arrays, strings,
/// numbers, booleans, null), wrapped so it can cross tasks.
public struct JSONValue: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: `object` holds only what JSONSerialization produces or
    // accepts (dictionaries, arrays, strings, numbers, NSNull); the wrapper
    // exposes it read-only and never mutates it, so sharing it is safe.
    public let object: Any

    public init(_ object: Any) { self.object = object }

    public var description: String { "\(object)" }

    public subscript(key: String) -> JSONValue? {
        (object as? [String: Any])?[key].map(JSONValue.init)
    }

    public var string: String? { object as? String }
    public var number: Double? { (object as? NSNumber)?.doubleValue }
    public var array: [JSONValue]? { (object as? [Any])?.map(JSONValue.init) }
}

/// `Data` ⇄ JSON values (fragments allowed); errors are `JSONSerialization`'s.
public struct JSONTransformer: TwoWayTransformer {
    public init() {}

    public func transform(_ value: Data) async throws -> JSONValue {
        JSONValue(try JSONSerialization.jsonObject(with: value, options: [.fragmentsAllowed]))
    }

    public func inverseTransform(_ value: JSONValue) async throws -> Data {
        try JSONSerialization.data(withJSONObject: value.object, options: [.fragmentsAllowed, .sortedKeys])
    }
}

/// `Data` ⇄ a `Codable` type, as JSON (by default with sorted keys and
/// Foundation's default date and data strategies; pass your own encoder and
/// decoder, configured before, for ISO-8601 dates and the like).
public struct CodableTransformer<T: Codable & Sendable>: TwoWayTransformer {
    let encoder: JSONEncoder
    let decoder: JSONDecoder

    public init(encoder: JSONEncoder = Self.sortedKeysEncoder(), decoder: JSONDecoder = JSONDecoder()) {
        self.encoder = encoder
        self.decoder = decoder
    }

    public static func sortedKeysEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    public func transform(_ value: Data) async throws -> T { try decoder.decode(T.self, from: value) }
    public func inverseTransform(_ value: T) async throws -> Data { try encoder.encode(value) }
}

/// `Date` ⇄ `String` with a fixed format, locale and time zone, so results do
/// not depend on the machine's settings (default: ISO-8601-like, POSIX, UTC).
public struct DateFormatTransformer: TwoWayTransformer {
    public let format: String
    public let timeZone: TimeZone
    public let locale: Locale

    public init(format: String = "yyyy-MM-dd'T'HH:mm:ssXXXXX",
                timeZone: TimeZone = TimeZone(identifier: "UTC")!,
                locale: Locale = Locale(identifier: "en_US_POSIX")) {
        self.format = format
        self.timeZone = timeZone
        self.locale = locale
    }

    func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.dateFormat = format
        formatter.timeZone = timeZone
        formatter.locale = locale
        return formatter
    }

    public func transform(_ value: Date) async throws -> String { formatter().string(from: value) }

    public func inverseTransform(_ value: String) async throws -> Date {
        guard let date = formatter().date(from: value) else { throw TransformerError.unparsable(value) }
        return date
    }
}

/// `NSNumber` ⇄ `String` with a fixed style and locale (default: decimal, POSIX).
public struct NumberFormatTransformer: TwoWayTransformer {
    public let style: NumberFormatter.Style
    public let locale: Locale

    public init(style: NumberFormatter.Style = .decimal, locale: Locale = Locale(identifier: "en_US_POSIX")) {
        self.style = style
        self.locale = locale
    }

    func formatter() -> NumberFormatter {
        let formatter = NumberFormatter()
        formatter.numberStyle = style
        formatter.locale = locale
        return formatter
    }

    public func transform(_ value: Double) async throws -> String {
        guard let text = formatter().string(from: NSNumber(value: value)) else {
            throw TransformerError.unformattable("\(value)")
        }
        return text
    }

    public func inverseTransform(_ value: String) async throws -> Double {
        guard let number = formatter().number(from: value) else { throw TransformerError.unparsable(value) }
        return number.doubleValue
    }
}
