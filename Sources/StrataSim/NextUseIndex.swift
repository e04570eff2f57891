/// For each request of a trace, the position of the next request for the same
/// key (``never`` if there is none): the future that Bélády's policy reads.
public struct NextUseIndex: Sendable {
    /// The position used for "never requested again".
    public static let never = Int.max

    /// `next[i]` is the next position after `i` with the same key, or ``never``.
    public let next: [Int]

    /// Computes the index in one backward pass over `keys`.
    public init(keys: [Int]) {
        var next = [Int](repeating: Self.never, count: keys.count)
        var seen: [Int: Int] = [:]
        seen.reserveCapacity(min(keys.count, 1 << 20))
        for i in stride(from: keys.count - 1, through: 0, by: -1) {
            if let later = seen.updateValue(i, forKey: keys[i]) { next[i] = later }
        }
        self.next = next
    }
}
