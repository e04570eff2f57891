import Strata
import Synchronization
import Testing

/// Audit (rule 1/2): cancellation and shutdown sequences.
@Suite struct AuditCancellationTests {
    /// `memory + lower.capRequests(1)`: a set of "new" is cancelled while its
    /// lower half waits for a permit. The upper half has already stored "new";
    /// the lower set fails with `CancellationError`, and the clean-up remove
    /// that should drop the lower level's old value runs in the same cancelled
    /// task, so it is cancelled too. The composition is left with "new" above
    /// and "old" below: a get answers "new", and once the memory level lets
    /// the key go (a memory warning) the overwritten "old" comes back.
    @Test func cancelledSetWhoseLowerHalfWaitsLeavesTheOverwrittenValueBelow() async throws {
        let backing = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let gate = Gate()
        let slowLower = BasicCache<String, String>(
            name: "slow",
            getIfPresent: { key in
                if key == "busy" { try await gate.wait() }
                return try await backing.getIfPresent(key)
            },
            set: { value, key in try await backing.set(value, forKey: key) },
            remove: { key in try await backing.remove(key) },
            clear: { await backing.clear() },
            onMemoryWarning: {}
        )
        let capped = slowLower.capRequests(1)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + capped
        try await cache.set("old", forKey: "k")

        // Another request holds the lower level's only permit.
        let holder = Task { try await capped.getIfPresent("busy") }
        #expect(await yieldUntil { gate.waiting == 1 })

        let writer = Task { try await cache.set("new", forKey: "k") }
        #expect(await yieldUntil { capped.semaphore.waiting == 1 && memory.value(forKey: "k") == "new" })
        writer.cancel()
        // The lower half fails for the cancellation; its clean-up remove is
        // not cancelled and runs once the permit is free, and the set
        // returns after it.
        #expect(await yieldUntil { capped.semaphore.waiting == 1 })
        gate.open()
        await #expect(throws: CancellationError.self) { try await writer.value }
        _ = try? await holder.value

        let first = try await cache.getIfPresent("k")
        #expect(first == "new")
        // The failed set's clean-up should have left no "old" below.
        let below = backing.value(forKey: "k")
        #expect(below != "old", "the lower level still holds the overwritten value")
        await cache.onMemoryWarning()
        let second = try await cache.getIfPresent("k")
        #expect(second != "old", "after answering \(String(describing: first)), the composition answered the overwritten value")
    }
}
