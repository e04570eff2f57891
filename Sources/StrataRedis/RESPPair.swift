/// One entry of a RESP3 map or attribute.
public struct RESPPair: Sendable, Equatable {
    /// The entry's key (any RESP value, usually a string).
    public var key: RESPValue
    /// The entry's value.
    public var value: RESPValue

    /// An entry mapping `key` to `value`.
    public init(key: RESPValue, value: RESPValue) {
        self.key = key
        self.value = value
    }
}
