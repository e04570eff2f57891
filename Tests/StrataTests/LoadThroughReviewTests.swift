import Foundation
@testable import Strata
import Synchronization
import Testing

@Suite struct LoadThroughReviewTests {
    final class Origin: Sendable {
        let value = Mutex<String?>(nil)
        func read() -> String? { value.withLock { $0 } }
        func write(_ v: String?) { value.withLock { $0 = v } }
    }

    /// Cache-aside invalidation: the origin changes, then the key is removed
    /// through the stack. A get that *starts after the remove returned* must
    /// not be answered by a load that read the origin before the remove.
    @Test(arguments: ["remove", "set+remove", "clear"])
    func aGetAfterARemoveDoesNotJoinALoadBegunBeforeIt(_ write: String) async throws {
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20)
            + MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let origin = Origin(); origin.write("v1")
        let gate = Gate()
        let first = Task {
            try await stack.get("k", ttl: nil) { _ in
                let seen = origin.read()!      // reads the origin now...
                try await gate.wait()          // ...and answers later
                return seen
            }
        }
        #expect(await yieldUntil { gate.waiting == 1 })
        origin.write("v2")
        switch write {
        case "remove": try await stack.remove("k")
        case "set+remove": try await stack.set("v2", forKey: "k"); try await stack.remove("k")
        default: await stack.clear()
        }
        // Strictly after the invalidation returned:
        let second = Task { try await stack.get("k", ttl: nil) { _ in origin.read()! } }
        let done = Atomic<Bool>(false)
        let watcher = Task { _ = try? await second.value; done.store(true, ordering: .relaxed) }
        #expect(await yieldUntil { stack.loadsJoined == 1 || done.load(ordering: .relaxed) })
        gate.open()
        #expect(try await first.value == "v1")  // overlapped: allowed
        let answer = try await second.value
        _ = await watcher.value
        #expect(answer == "v2", "a get begun after \(write) returned got \(answer), loaded before it")
    }

    /// Same, with a remembered-nothing answer: the load that found nothing
    /// began before the key was set; a get after the set and a later remove
    /// gets nil although the origin now has it.
    @Test func aGetAfterSetAndRemoveDoesNotJoinANotFoundLoadBegunBefore() async throws {
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20)
            + MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let origin = Origin()
        let gate = Gate()
        let first = Task {
            try await stack.get("k") { _ -> Loaded<String> in
                let seen = origin.read()
                try await gate.wait()
                return seen.map { .value($0, ttl: nil) } ?? .notFound(ttl: .seconds(60))
            }
        }
        #expect(await yieldUntil { gate.waiting == 1 })
        origin.write("created")
        try await stack.remove("k")   // invalidate after creating in the origin
        let second = Task { try await stack.get("k") { _ -> Loaded<String> in origin.read().map { .value($0, ttl: nil) } ?? .notFound(ttl: nil) } }
        let done = Atomic<Bool>(false)
        let watcher = Task { _ = try? await second.value; done.store(true, ordering: .relaxed) }
        #expect(await yieldUntil { stack.loadsJoined == 1 || done.load(ordering: .relaxed) })
        gate.open()
        #expect(try await first.value == nil)
        let answer = try await second.value
        _ = await watcher.value
        #expect(answer == "created", "a get begun after the remove got \(String(describing: answer))")
    }

    /// A change reported from below (another process wrote and then removed
    /// the key in the shared store) also must end joining of loads.
    @Test func aGetAfterAChangeReportedFromBelowDoesNotJoinALoadBegunBefore() async throws {
        let lower = FakeLevel<String, String>(name: "shared")
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20) + lower
        let origin = Origin(); origin.write("v1")
        let gate = Gate()
        let first = Task {
            try await stack.get("k", ttl: nil) { _ in
                let seen = origin.read()!
                try await gate.wait()
                return seen
            }
        }
        #expect(await yieldUntil { gate.waiting == 1 })
        origin.write("v2")
        let applied = stack.invalidationsApplied
        await lower.changeElsewhere("k", to: nil)   // another process invalidated k
        #expect(await yieldUntil { stack.invalidationsApplied > applied })
        let second = Task { try await stack.get("k", ttl: nil) { _ in origin.read()! } }
        let done = Atomic<Bool>(false)
        let watcher = Task { _ = try? await second.value; done.store(true, ordering: .relaxed) }
        #expect(await yieldUntil { stack.loadsJoined == 1 || done.load(ordering: .relaxed) })
        gate.open()
        _ = try await first.value
        let answer = try await second.value
        _ = await watcher.value
        #expect(answer == "v2", "a get begun after another process's invalidation was applied got \(answer)")
    }
}

@Suite struct LoadThroughNotFoundReviewTests {
    typealias Counter = LoadThroughTests.Counter

    /// A miss remembered by get(_:load:) makes get(_:ttl:load:) call its
    /// loader on every call, outside the single flight, and never store it.
    @Test func aRememberedMissMakesGetWithTTLLoadEveryTimeAndStoreNothing() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let stack = memory + MemoryCacheLevel<String, String>(capacity: 1 << 20)
        #expect(try await stack.get("k") { _ in .notFound(ttl: .seconds(60)) } == nil)
        let loads = Counter(), gate = Gate()
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 {
                group.addTask { try await stack.get("k", ttl: .seconds(60)) { _ in _ = loads.next(); try await gate.wait(); return "v" } }
            }
            _ = await yieldUntil { gate.waiting == 10 || (gate.waiting == 1 && stack.loadsJoined == 9) }
            gate.open()
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(answers == Array(repeating: "v", count: 10))
        #expect(loads.count == 1, "\(loads.count) loads for 10 concurrent misses")
        #expect(memory.value(forKey: "k") == "v", "the loaded value was not stored")
        #expect(try await stack.get("k", ttl: .seconds(60)) { _ in _ = loads.next(); return "v" } == "v")
        #expect(loads.count <= 2, "\(loads.count): asked again although it answered a value")
    }

    /// getAll found the key (the origin created it); once that value expires,
    /// the older "not found" comes back instead of asking the loader.
    @Test func aMissRememberedBeforeAGetAllFoundTheKeyComesBackWhenItsValueExpires() async throws {
        let clock = TestClock()
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock)
            + MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock)
        #expect(try await stack.get("k") { _ in .notFound(ttl: .seconds(60)) } == nil)
        let all = try await stack.getAll(["k"], ttl: .seconds(5)) { _ in ["k": "created"] }
        #expect(all == ["k": "created"])
        await stack.waitForPendingWrites()
        clock.advance(by: .seconds(6))
        let loads = Counter()
        let answer = try await stack.get("k") { _ in _ = loads.next(); return .value("created", ttl: .seconds(5)) }
        #expect(answer == "created", "the stack saw the key exist, then answered \(String(describing: answer)) (the older miss), loader asked \(loads.count)x")
    }
}
