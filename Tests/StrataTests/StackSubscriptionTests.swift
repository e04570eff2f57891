import Foundation
@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// A stack (a composition) subscribes to its levels for as long as it lives
/// and no longer: its subscriptions hold it weakly and are cancelled when it
/// goes, and no level holds another or the stack.
@Suite struct StackSubscriptionTests {

    /// A review found 100 listeners left on a disk level by 100 compositions
    /// of `memory.instrumented(name:) + disk` built per request (the old
    /// stand-in rules needed an identity, and a struct wrapper has none).
    @Test func aStackBuiltPerRequestLeavesNoSubscriptionBehind() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        try await disk.set(Data("v".utf8), forKey: "k")
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        let l1 = memory.instrumented(name: "L1")
        for _ in 0..<100 {
            do {
                let cache = l1 + disk
                #expect(try await cache.getIfPresent("k") == Data("v".utf8))
                await cache.waitForPendingWrites()
                #expect(disk.changes.listeners.count >= 1, "the live stack's subscription")
            }
            // A back-fill's task lets go of the stack a moment after it is done.
            #expect(await poll { disk.changes.listeners.count == 0 }, "\(disk.changes.listeners.count) left")
        }
    }

    @Test func aStackIsFreedWithItsLastCopyAndItsLevelsWithIt() async throws {
        let shared = FakeLevel<String, String>(name: "shared", ["k": "v"])
        let stack: Weak, upper: Weak
        do {
            let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
            let cache = memory + shared
            #expect(try await cache.getIfPresent("k") == "v")
            try await cache.set("w", forKey: "j")
            await cache.waitForPendingWrites()
            #expect(shared.listeners.count == 1)
            stack = Weak(cache.stack)
            upper = Weak(memory)
        }
        #expect(await poll { stack.object == nil && upper.object == nil && shared.listeners.count == 0 })
    }

    /// While it lives, the stack applies what its lower level reports, and
    /// counts it; it skips the report of a write it made itself.
    @Test func aLiveStackDropsWhatItsLowerLevelReportsAndSkipsItsOwnWrites() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let mine = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        let theirs = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        let a = mine + disk, b = theirs + disk
        try await b.set(Data("old".utf8), forKey: "k")
        // The disk level reports b's write to a (in a task of its own), not to b.
        #expect(await poll { a.invalidationsApplied == 1 })
        try await a.set(Data("new".utf8), forKey: "k")
        // And a's write to b: b drops the key; a keeps what it wrote.
        #expect(await poll { b.invalidationsApplied == 1 })
        #expect(try await theirs.getIfPresent("k") == nil)
        #expect(try await mine.getIfPresent("k") == Data("new".utf8))
        #expect(a.invalidationsApplied == 1, "a skipped the report of its own write")
        #expect(try await b.getIfPresent("k") == Data("new".utf8))
    }

    /// Stacks built per request over a level that reports changes: the
    /// level warns (once) when subscriptions to it have come and gone 64 times.
    @Test func stacksBuiltPerRequestAreWarnedAbout() async throws {
        let shared = FakeLevel<String, String>(name: "shared", ["k": "v"])
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        for request in 1...64 {
            do {
                let cache = memory + shared
                #expect(try await cache.getIfPresent("k") == "v")
                await cache.waitForPendingWrites()
            }
            #expect(await poll { shared.listeners.count == 0 })
            #expect(shared.listeners.warnedOfChurn == (request == 64))
        }
    }

    /// Writer ids are never reused: a stack built where a gone one was cannot
    /// take its id and skip reports of writes it did not make.
    @Test func writerIDsAreNeverReused() {
        let shared = FakeLevel<String, String>(name: "shared")
        var seen = Set<UInt64>()
        for _ in 0..<1000 {
            let cache = MemoryCacheLevel<String, String>(capacity: 1 << 10) + shared
            #expect(seen.insert(cache.stack.writer).inserted)
        }
    }
}
