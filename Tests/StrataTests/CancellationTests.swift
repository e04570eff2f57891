import Strata
import Synchronization
import Testing

@Suite struct CancellationTests {
    @Test func cancellingTheCallerCancelsTheOriginThroughEveryLayer() async throws {
        let gate = Gate()
        let originCancelled = Atomic<Bool>(false)
        let origin = BasicFetcher<String, String> { key in
            do { try await gate.wait() } catch { originCancelled.store(true, ordering: .relaxed); throw error }
            return key
        }
        let started = Atomic<Int>(0)
        let cache = MemoryCacheLevel<String, String>(capacity: 100).instrumented(name: "mem")
            + origin.conditioned { _ in started.add(1, ordering: .relaxed); return true }
                .transformKeys(OneWayTransformationBox<String, String> { $0 })
                .capRequests(4)
                .pooled()
                .instrumented(name: "origin")
        let task = Task { try await cache.get("k") }
        #expect(await yieldUntil { gate.waiting == 1 })
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let wasCancelled = originCancelled.load(ordering: .relaxed)
        #expect(wasCancelled)
        #expect(started.load(ordering: .relaxed) == 1)
    }

    @Test func cancelledComposedSetThrowsCancellation() async throws {
        let gate = Gate()
        let slow = BasicCache<String, Int>(get: { _ in throw FetchError.valueNotInCache },
                                           set: { _, _ in try await gate.wait() },
                                           remove: { _ in }, clear: {}, onMemoryWarning: {})
        let cache = slow + slow
        let task = Task { try await cache.set(1, forKey: "k") }
        #expect(await yieldUntil { gate.waiting == 2 })
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
