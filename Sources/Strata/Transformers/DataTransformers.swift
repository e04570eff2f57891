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

    /// One line naming the encoding, or the start of the text or value.
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
    /// The encoding of the text.
    public let encoding: String.Encoding

    /// A transformer for text in `encoding`.
    public init(encoding: String.Encoding = .utf8) { self.encoding = encoding }

    /// The text of `value`; bytes that are not text in ``encoding`` throw
    /// ``TransformerError/invalidText(encoding:)``.
    public func transform(_ value: Data) async throws -> String {
        guard let text = String(data: value, encoding: encoding) else {
            throw TransformerError.invalidText(encoding: "\(encoding)")
        }
        return text
    }

    /// The bytes of `value` in ``encoding``; text it cannot hold throws
    /// ``TransformerError/unencodableText(encoding:)``.
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
    /// The document as `JSONSerialization` gives and takes it.
    public let object: Any

    /// Wraps `object`, which must be a value `JSONSerialization` can write.
    public init(_ object: Any) { self.object = object }

    /// The wrapped object's description (not JSON text).
    public var description: String { "\(object)" }

    /// The member `key` of an object; `nil` if absent or if this is not an object.
    public subscript(key: String) -> JSONValue? {
        (object as? [String: Any])?[key].map(JSONValue.init)
    }

    /// The string, if this is one.
    public var string: String? { object as? String }
    /// The number (or boolean, as 0 or 1), if this is one.
    public var number: Double? { (object as? NSNumber)?.doubleValue }
    /// The elements, if this is an array.
    public var array: [JSONValue]? { (object as? [Any])?.map(JSONValue.init) }
}

/// `Data` ⇄ JSON values (fragments allowed); errors are `JSONSerialization`'s.
public struct JSONTransformer: TwoWayTransformer {
    /// The transformer; it has no settings.
    public init() {}

    /// The JSON document in `value`.
    public func transform(_ value: Data) async throws -> JSONValue {
        JSONValue(try JSONSerialization.jsonObject(with: value, options: [.fragmentsAllowed]))
    }

    /// `value` as JSON text with sorted keys.
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

    /// A transformer encoding with `encoder` and decoding with `decoder`.
    public init(encoder: JSONEncoder = Self.sortedKeysEncoder(), decoder: JSONDecoder = JSONDecoder()) {
        self.encoder = encoder
        self.decoder = decoder
    }

    /// A default `JSONEncoder` that sorts keys, so equal values encode to equal bytes.
    public static func sortedKeysEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    /// `value` decoded; errors are `JSONDecoder`'s.
    public func transform(_ value: Data) async throws -> T { try decoder.decode(T.self, from: value) }
    /// `value` encoded; errors are `JSONEncoder`'s.
    public func inverseTransform(_ value: T) async throws -> Data { try encoder.encode(value) }
}

/// `Date` ⇄ `String` with a fixed format, locale and time zone, so results do
/// not depend on the machine's settings (default: ISO-8601-like, POSIX, UTC).
public struct DateFormatTransformer: TwoWayTransformer {
    /// The `DateFormatter` format string.
    public let format: String
    /// The time zone dates are written in and read in (when the text names none).
    public let timeZone: TimeZone
    /// The locale of month and day names and digits.
    public let locale: Locale

    /// A transformer with these settings.
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

    /// `value` written in ``format``.
    public func transform(_ value: Date) async throws -> String { formatter().string(from: value) }

    /// The date `value` names; text not in ``format`` throws ``TransformerError/unparsable(_:)``.
    public func inverseTransform(_ value: String) async throws -> Date {
        guard let date = formatter().date(from: value) else { throw TransformerError.unparsable(value) }
        return date
    }
}

/// `Double` ⇄ `String` with a fixed style and locale (default: decimal, POSIX).
public struct NumberFormatTransformer: TwoWayTransformer {
    /// The `NumberFormatter` style.
    public let style: NumberFormatter.Style
    /// The locale of separators and digits.
    public let locale: Locale

    /// A transformer with these settings.
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

    /// `value` written in ``style``; a value the formatter cannot write throws
    /// ``TransformerError/unformattable(_:)``.
    public func transform(_ value: Double) async throws -> String {
        guard let text = formatter().string(from: NSNumber(value: value)) else {
            throw TransformerError.unformattable("\(value)")
        }
        return text
    }

    /// The number `value` writes; text the formatter cannot read throws
    /// ``TransformerError/unparsable(_:)``.
    public func inverseTransform(_ value: String) async throws -> Double {
        guard let number = formatter().number(from: value) else { throw TransformerError.unparsable(value) }
        return number.doubleValue
    }
}
