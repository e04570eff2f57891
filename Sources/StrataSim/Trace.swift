/// A request sequence to replay: one key per request and, optionally, each
/// request's object size.
public struct Trace: Sendable {
    /// The largest object size, and the largest capacity, `strata sim`
    /// accepts: 2^50 (1 PiB, or that many objects). Policies add sizes to
    /// byte counts (the memory level its capacity plus a slack), so values
    /// near `Int.max` would overflow and trap; 2^50 leaves room for any sum
    /// of a few of them and is beyond any real cache.
    public static let maxSize = 1 << 50

    /// A short name for reports (a file name without `.gz`/`.trace`, or a workload spec).
    public var name: String
    /// The key of each request, in order.
    public var keys: [Int]
    /// The object size of each request, or `nil` when every object has size 1
    /// (capacities then count objects, not bytes).
    public var sizes: [Int]?

    /// A trace of `keys`, with `sizes` (one per key) when capacity is in bytes.
    public init(name: String, keys: [Int], sizes: [Int]? = nil) {
        precondition(sizes == nil || sizes!.count == keys.count, "one size per key")
        self.name = name
        self.keys = keys
        self.sizes = sizes
    }

    /// The number of requests.
    public var count: Int { keys.count }

    /// Whether requests carry sizes (capacity in bytes) rather than size 1 each.
    public var isSized: Bool { sizes != nil }

    /// The number of different keys requested.
    public var distinctKeys: Int { Set(keys).count }
}
