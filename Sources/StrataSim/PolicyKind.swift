import Foundation

/// A named policy that `--policies` can select: it makes a fresh ``Policy``
/// for one trace and capacity.
public struct PolicyKind: Sendable {
    /// What a policy is made from.
    public struct Context {
        /// The trace about to be replayed.
        public let trace: Trace
        /// Capacity in objects, or bytes for a sized trace.
        public let capacity: Int
        /// The run's seed: the memory level's key hashes are salted with it (``SimKey``).
        public let seed: UInt64
        let future: FutureCache

        /// The trace's next-use index (computed once per trace, on first use).
        public var nextUse: NextUseIndex { future.index(for: trace) }
    }

    /// Computes a trace's ``NextUseIndex`` once and shares it across capacities.
    final class FutureCache {
        var cached: NextUseIndex?
        func index(for trace: Trace) -> NextUseIndex {
            if let cached { return cached }
            let index = NextUseIndex(keys: trace.keys)
            cached = index
            return index
        }
    }

    /// The name in `--policies` and in reports.
    public let name: String
    /// One line for help texts.
    public let summary: String
    /// Makes the policy.
    public let make: @Sendable (Context) -> any Policy

    /// A policy kind called `name`.
    public init(name: String, summary: String, make: @escaping @Sendable (Context) -> any Policy) {
        self.name = name
        self.summary = summary
        self.make = make
    }

    /// LRU: the real memory level with ``EvictionPolicy/lru``.
    public static let lru = PolicyKind(name: "lru", summary: "least recently used (MemoryCacheLevel, policy: .lru)") {
        MemoryLevelPolicy(.lru, capacity: $0.capacity, sized: $0.trace.isSized, seed: $0.seed)
    }

    /// Adaptive W-TinyLFU: the real memory level with ``EvictionPolicy/adaptive``.
    public static let adaptive = PolicyKind(
        name: "adaptive", summary: "adaptive W-TinyLFU (MemoryCacheLevel, policy: .adaptive)"
    ) {
        MemoryLevelPolicy(.adaptive, capacity: $0.capacity, sized: $0.trace.isSized, seed: $0.seed)
    }

    /// W-TinyLFU with a fixed 1% window (``TinyLFUPolicy``): the simulator's
    /// reference for the adaptive policy.
    public static let tinylfu = PolicyKind(name: "tinylfu", summary: "W-TinyLFU with a fixed 1% window (reference)") {
        TinyLFUPolicy(capacity: $0.capacity)
    }

    /// Bélády's clairvoyant policy (``OptimalPolicy``).
    public static let optimal = PolicyKind(name: "optimal", summary: "Bélády's clairvoyant policy, the upper bound") {
        OptimalPolicy(keys: $0.trace.keys, nextUse: $0.nextUse, capacity: $0.capacity)
    }

    /// Every known policy, in the order help texts list them.
    public static let all: [PolicyKind] = [.lru, .tinylfu, .adaptive, .optimal]

    /// A comma-separated list was not a list of known, distinct policies.
    public struct ListError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The kinds named in a comma-separated `list` such as `lru,optimal`, in
    /// that order; an unknown name is an error listing the known ones.
    public static func parse(_ list: String, known: [PolicyKind] = all) throws -> [PolicyKind] {
        let names = list.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let knownNames = known.map(\.name).joined(separator: ", ")
        var kinds: [PolicyKind] = []
        for name in names {
            guard !name.isEmpty else {
                throw ListError(description: "empty policy name in \"\(list)\" (known policies: \(knownNames))")
            }
            guard let kind = known.first(where: { $0.name == name }) else {
                throw ListError(description: "unknown policy \"\(name)\" (known policies: \(knownNames))")
            }
            guard !kinds.contains(where: { $0.name == name }) else {
                throw ListError(description: "policy \"\(name)\" is listed twice")
            }
            kinds.append(kind)
        }
        return kinds
    }
}
