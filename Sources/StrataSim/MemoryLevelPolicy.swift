import Strata

/// A ``Policy`` that is the real ``MemoryCacheLevel`` with one of its
/// ``EvictionPolicy`` values, driven through its public, synchronous API (no
/// copy of its eviction logic).
///
/// A request is `value(forKey:)`; a miss `store`s the object with its size as
/// the value and as its cost, so the level's byte capacity is the simulated
/// capacity (in objects when every size is 1). An object larger than the
/// whole capacity is not admitted (the level refuses it); under `.adaptive`
/// the level may also decline a store.
///
/// The replay must come from one thread: LRU order follows monotonic-clock
/// stamps per access, and the adaptive policy applies buffered reads before
/// each decision, so a single-threaded replay is exact and repeatable. Keys
/// are ``SimKey``s hashed with the run's seed, so it repeats across processes
/// too (Swift's own hashing is seeded per process).
public final class MemoryLevelPolicy: Policy {
    public var name: String { level.policy.rawValue }
    /// The level under test: keys are trace keys, values are object sizes.
    public let level: MemoryCacheLevel<SimKey, Int>
    /// The salt of every key's hash (from the seed).
    let salt: UInt64

    /// A cache of `capacity` (objects, or bytes when `sized`) evicting by
    /// `policy`, its keys hashed with `seed`.
    public init(_ policy: EvictionPolicy, capacity: Int, sized: Bool, seed: UInt64 = 0) {
        let cost: @Sendable (Int) -> Int
        if sized { cost = { size in size } } else { cost = { _ in 1 } }
        level = MemoryCacheLevel<SimKey, Int>(name: "sim-\(policy.rawValue)", capacity: capacity, policy: policy, cost: cost)
        salt = SimKey.salt(seed: seed)
    }

    public func access(key: Int, size: Int) -> Bool {
        let key = SimKey(key, salt: salt)
        if level.value(forKey: key) != nil { return true }
        do {
            try level.store(size, forKey: key)
        } catch {
            // MemoryCacheError.valueTooLarge: bigger than the cache, not admitted.
        }
        return false
    }
}
