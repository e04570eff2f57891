import HeapModule

/// Bélády's clairvoyant policy: on a miss it admits the object, then evicts
/// the resident objects (possibly the new one) whose next request is farthest
/// in the future until the cache fits. An object never requested again is not
/// admitted.
///
/// With every size 1 this is Bélády's MIN, the optimal hit ratio: the upper
/// bound for any policy. With sizes, evicting by farthest next use until the
/// new object fits is the standard size-aware approximation (exact optimal
/// caching of variable-size objects is NP-hard), so it is a strong reference
/// rather than a proven bound.
///
/// It must see the requests of the trace it was made for, in order.
public final class OptimalPolicy: Policy {
    public let name = "optimal"

    struct Candidate: Comparable {
        var nextUse: Int
        var key: Int
        static func < (a: Self, b: Self) -> Bool {
            a.nextUse != b.nextUse ? a.nextUse < b.nextUse : a.key < b.key
        }
    }

    let keys: [Int]
    let nextUse: [Int]
    let capacity: Int
    var position = 0
    /// Capacity not yet taken: negative while an admission is being paid for
    /// by evictions. Kept instead of the bytes used because `used + size`
    /// can overflow when both are near `Int.max`, while `free - size` (each
    /// at most the capacity) cannot.
    var free: Int
    /// Resident keys: their next use and size.
    var resident: [Int: (nextUse: Int, size: Int)] = [:]
    /// Farthest next use on top; entries whose next use has since changed are
    /// stale and skipped.
    var heap = Heap<Candidate>()

    /// Bélády for `trace` with `capacity` (objects, or bytes for a sized trace).
    public convenience init(trace: Trace, capacity: Int) {
        self.init(keys: trace.keys, nextUse: NextUseIndex(keys: trace.keys), capacity: capacity)
    }

    /// Bélády for requests `keys` whose ``NextUseIndex`` is already known.
    public init(keys: [Int], nextUse: NextUseIndex, capacity: Int) {
        precondition(nextUse.next.count == keys.count, "the index must be of these keys")
        self.keys = keys
        self.nextUse = nextUse.next
        self.capacity = capacity
        self.free = capacity
    }

    public func access(key: Int, size: Int) -> Bool {
        precondition(position < keys.count && keys[position] == key, "OptimalPolicy must replay its own trace in order")
        let next = nextUse[position]
        position += 1
        if let entry = resident[key] {
            resident[key] = (next, entry.size)
            heap.insert(Candidate(nextUse: next, key: key))
            compactIfNeeded()
            return true
        }
        guard next != NextUseIndex.never, size <= capacity else { return false }
        resident[key] = (next, size)
        free -= size
        heap.insert(Candidate(nextUse: next, key: key))
        while free < 0, let farthest = heap.popMax() {
            guard let entry = resident[farthest.key], entry.nextUse == farthest.nextUse else { continue }
            resident[farthest.key] = nil
            free += entry.size
        }
        return false
    }

    /// Rebuilds the heap from the resident set when stale entries dominate.
    func compactIfNeeded() {
        guard heap.count > 2 * resident.count + 1024 else { return }
        heap = Heap(resident.map { Candidate(nextUse: $0.value.nextUse, key: $0.key) })
    }
}
