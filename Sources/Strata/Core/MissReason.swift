/// Why a level answered a get with a miss, as reported to observers
/// (``CacheEvent/missReason``): the explorer's event log shows
/// `L1 miss (expired)`.
public enum MissReason: String, Sendable, Equatable {
    /// The level holds nothing for the key.
    case absent
    /// The level held an entry for the key, but it had expired (and is gone).
    case expired
}

extension CacheContext {
    /// Called by a level that found an entry for the key but expired, so a
    /// traced get (``RequestTrace``) reports its miss as
    /// ``MissReason/expired``. Costs a task-local read, on the expired path only.
    public static func noteExpired() { trace?.noteExpired() }
}
