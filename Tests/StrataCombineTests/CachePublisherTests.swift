import OpenCombineShim
import Strata
import StrataCombine
import Synchronization
import Testing

/// Get, set and remove as Combine publishers (OpenCombine on Linux).
@Suite struct CachePublisherTests {
    /// Collects what a publisher delivers.
    final class Collected<Output: Sendable>: Sendable {
        let values = Mutex<[Output]>([])
        let completion = Mutex<String?>(nil)
        func poll() async -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if completion.withLock({ $0 }) != nil { return true }
                try? await Task.sleep(for: .milliseconds(1))
            }
            return false
        }
    }

    func collect<Output: Sendable>(_ publisher: CachePublisher<Output>) -> (Collected<Output>, AnyCancellable) {
        let collected = Collected<Output>()
        let cancellable = publisher.sink(receiveCompletion: { completion in
            switch completion {
            case .finished: collected.completion.withLock { $0 = "finished" }
            case .failure(let error): collected.completion.withLock { $0 = "failed: \(error)" }
            }
        }, receiveValue: { value in collected.values.withLock { $0.append(value) } })
        return (collected, cancellable)
    }

    @Test func getSetAndRemoveAsPublishers() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let (set, setCancellable) = collect(memory.setPublisher("v", forKey: "k"))
        #expect(await set.poll() && set.completion.withLock { $0 } == "finished")
        let (got, getCancellable) = collect(memory.getPublisher("k"))
        #expect(await got.poll())
        #expect(got.values.withLock { $0 } == ["v"] && got.completion.withLock { $0 } == "finished")
        let (removed, removeCancellable) = collect(memory.removePublisher("k"))
        #expect(await removed.poll())
        let (missed, missCancellable) = collect(memory.getPublisher("k"))
        #expect(await missed.poll())
        #expect(missed.values.withLock { $0 }.isEmpty && missed.completion.withLock { $0 } == "failed: memory: get k: no level had a value")
        _ = (setCancellable, getCancellable, removeCancellable, missCancellable)
    }

    @Test func cancellingTheSubscriptionCancelsTheOperation() async throws {
        let cancelled = Atomic<Bool>(false)
        let started = Atomic<Bool>(false)
        let slow = CachePublisher<String> {
            started.store(true, ordering: .relaxed)
            do { try await Task.sleep(for: .seconds(60)) } catch {
                cancelled.store(true, ordering: .relaxed)
                throw error
            }
            return "late"
        }
        let (collected, cancellable) = collect(slow)
        let deadline = ContinuousClock.now + .seconds(10)
        while !started.load(ordering: .relaxed), ContinuousClock.now < deadline { await Task.yield() }
        cancellable.cancel()
        while !cancelled.load(ordering: .relaxed), ContinuousClock.now < deadline { await Task.yield() }
        let wasCancelled = cancelled.load(ordering: .relaxed)
        #expect(wasCancelled, "the operation's task was cancelled")
        #expect(collected.values.withLock { $0 }.isEmpty && collected.completion.withLock { $0 } == nil, "nothing delivered after cancel")
    }

    @Test func nothingStartsBeforeDemand() async throws {
        let runs = Atomic<Int>(0)
        let publisher = CachePublisher<Int> { runs.add(1, ordering: .relaxed).newValue }
        final class Lazy: Subscriber, @unchecked Sendable {  // used from this test only, one thread at a time
            typealias Input = Int
            typealias Failure = any Error
            var subscription: (any Subscription)?
            let received = Mutex<[Int]>([])
            func receive(subscription: any Subscription) { self.subscription = subscription }
            func receive(_ input: Int) -> Subscribers.Demand { received.withLock { $0.append(input) }; return .none }
            func receive(completion: Subscribers.Completion<any Error>) {}
        }
        let lazy = Lazy()
        publisher.subscribe(lazy)
        await Task.yield()
        let runsBefore = runs.load(ordering: .relaxed)
        #expect(runsBefore == 0, "no demand, no operation")
        lazy.subscription?.request(.max(1))
        let deadline = ContinuousClock.now + .seconds(10)
        while lazy.received.withLock({ $0 }).isEmpty, ContinuousClock.now < deadline { await Task.yield() }
        let runsAfter = runs.load(ordering: .relaxed)
        #expect(lazy.received.withLock { $0 } == [1] && runsAfter == 1)
    }
}
