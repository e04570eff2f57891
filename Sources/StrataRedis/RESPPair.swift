/// One entry of a RESP3 map or attribute.
public struct RESPPair: Sendable, Equatable {
    public var key: RESPValue
    public var value: RESPValue

    public init(key: RESPValue, value: RESPValue) {
        self.key = key
        self.value = value
    }
}
