import Strata

/// A level over a memory level whose reads wait for `gate`.
struct GatedLevel: CacheLevel {
    let store = MemoryCacheLevel<String, String>(capacity: 1 << 20)
    let gate = Gate()
    let reads = Counter()

    func getIfPresent(_ key: String) async throws -> String? { try await entry(forKey: key)?.value }
    func entry(forKey key: String) async throws -> CacheEntry<String>? {
        reads.increment()
        await gate.wait()
        return try await store.entry(forKey: key)
    }
    func set(_ value: String, forKey key: String) async throws { try await store.set(value, forKey: key) }
    func remove(_ key: String) async throws { try await store.remove(key) }
    func clear() async { await store.clear() }
    func onMemoryWarning() async {}
}
