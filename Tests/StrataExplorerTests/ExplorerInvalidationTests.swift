import Foundation
@testable import Strata
@testable import StrataExplorer
import StrataTestSupport
import Testing

/// A change another process makes to a shared level shows in the explorer:
/// the level above drops the key and the event log says so.
@Suite struct ExplorerInvalidationTests {
    /// L1 (memory) over L2 (a disk level on `disk`) over an instant origin.
    static func spec(_ name: String, disk: TemporaryDirectory, countLimit: Int) -> PipelineSpec {
        PipelineSpec(name: name, levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 1 << 20, countLimit: countLimit)),
            LevelSpec(name: "L2", kind: .disk(path: disk.path, capacity: 1 << 20)),
            LevelSpec(name: "origin", kind: .origin(latency: .zero, jitter: .zero, failureRate: 0, valueSize: 16)),
        ])
    }

    @Test func anotherProcessWritingTheSharedDiskShowsInTheLogAndDropsTheKeyAbove() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let spec = Self.spec("shared", disk: dir, countLimit: 100)
        let model = ExplorerModel(pipeline: try Pipeline(spec))
        try await model.withShutdown {
            #expect(await model.execute(.set(key: "user:7", value: "mine")).isError == false)
            #expect(model.panes()[0].entries == 1)
            // Another process's disk level on the same directory (same name, so the same files).
            let other = try DiskCacheLevel<String, Data>(name: "L2", directory: dir.url, capacity: 1 << 20)
            try await other.set(Data("theirs".utf8), forKey: "user:7")
            #expect(await Self.poll { model.panes()[0].entries == 0 }, "L1 kept the value another process replaced")
            #expect(await Self.poll { model.events.contains { $0.text == "invalidated user:7 (by another client, via L2)" } })
            #expect(await model.execute(.get(key: "user:7")).message.hasSuffix("\"theirs\""))
        }
    }

    /// The explorer alone on its disk directory logs no change "by another
    /// client" and counts no invalidation: before the fix, sets of hot keys
    /// made the disk's watch report its own renames as foreign (a key renamed
    /// into place again before the first rename's event), dropping them from
    /// L1. Another process's write is the sentinel: the watch reports in
    /// order, so once it is logged every earlier event has been handled.
    @Test func aDiskLevelAloneReportsNothingFromAnotherClient() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let spec = Self.spec("alone", disk: dir, countLimit: 1000)
        let model = ExplorerModel(pipeline: try Pipeline(spec))
        try await model.withShutdown {
            for round in 0..<300 {
                _ = await model.execute(.set(key: "hot:\(round % 3)", value: "v\(round)"))
                _ = await model.execute(.get(key: "k\(round % 20)"))
            }
            _ = await model.execute(.get(key: "sentinel"))
            // The sentinel's back-fill into L2 first: racing the other
            // process's write, both renames are reported (the order of the
            // two cannot be told apart), and the back-fill declines to
            // replace the other's value.
            await model.pipeline.cache.waitForPendingWrites()
            let other = try DiskCacheLevel<String, Data>(name: "L2", directory: dir.url, capacity: 1 << 20)
            try await other.set(Data("theirs".utf8), forKey: "sentinel")
            #expect(await Self.poll { model.events.contains { $0.text.hasPrefix("invalidated sentinel (by another client") } })
            let foreign = model.events.filter { $0.text.contains("by another client") && !$0.text.contains("sentinel") }
            #expect(foreign.isEmpty, "\(foreign.count) own writes logged as another client's: \(foreign.prefix(3).map(\.text))")
            #expect(model.panes()[0].stats.removes == 0)
            // The sentinel only: once, or twice when the watch handles the
            // back-fill's rename after the other's (on a loaded machine), when
            // the file it names is already the other's version.
            let invalidated = model.events.map(\.text).filter { $0.contains("invalidated") || $0.contains("flushed") }
            #expect((1...2).contains(model.panes()[0].stats.invalidations) && invalidated.allSatisfy { $0.contains("sentinel") },
                    "the sentinel only: \(invalidated)")
        }
    }

    /// A disk directory that cannot be watched (the watch limit, injected for
    /// this directory) says so in its pane, and L1 keeps nothing from it
    /// meanwhile; once watched again the note goes and L1 keeps values.
    @Test func anUnwatchedDiskLevelSaysSoAndKeepsNothingAbove() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        InotifyHub.failingPaths.withLock { $0[dir.path] = ENOSPC }
        defer { InotifyHub.failingPaths.withLock { $0[dir.path] = nil } }
        let spec = Self.spec("unwatched", disk: dir, countLimit: 100)
        let model = ExplorerModel(pipeline: try Pipeline(spec))
        await model.withShutdown {
            #expect(model.panes()[1].configuration.contains("not watched"), "\(model.panes()[1].configuration)")
            _ = await model.execute(.get(key: "user:1"))
            let started = ContinuousClock.now
            _ = await model.execute(.get(key: "user:1"))  // from L2: not kept in L1
            // The dropped back-fill sends no event: the get does not wait for one.
            #expect(ContinuousClock.now - started < .milliseconds(1500), "the get waited (2 s) for a back-fill that was dropped")
            await model.pipeline.cache.waitForPendingWrites()
            // A back-fill that landed before the level's `.all` report was
            // applied goes with it (the report loop may lag on a loaded machine).
            #expect(await Self.poll { model.panes()[0].entries == 0 }, "L1 kept a value from an unwatched level")
            InotifyHub.failingPaths.withLock { $0[dir.path] = nil }
            _ = await model.execute(.get(key: "user:1"))  // watched again by this read
            #expect(!model.panes()[1].configuration.contains("not watched"), "\(model.panes()[1].configuration)")
            var kept = false
            for _ in 0..<50 where !kept {  // bounded: each get is a read that may back-fill
                _ = await model.execute(.get(key: "user:1"))
                await model.pipeline.cache.waitForPendingWrites()
                kept = model.panes()[0].entries == 1
            }
            #expect(kept, "watched again: L1 keeps what it reads")
        }
    }

    /// Polls `condition` until it holds or 10 s pass (the change arrives from
    /// the kernel's file events: there is nothing to await).
    static func poll(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}
