import Foundation
@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// A shared store's report of its own write is a ``CacheChange`` that names
/// the stacks the write passed through (no task-local set while it is
/// delivered), and its listeners run with nothing of the writer's task: not
/// its write origin, not its request's trace.
@Suite struct LocalWriteReportTests {
    struct Heard: Sendable {
        var change: CacheChange<String>
        var writersInListener: Int
        var traced: Bool
    }

    @Test func aReportNamesItsWritersAndInheritsNothingFromTheWriter() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let writing = MemoryCacheLevel<String, Data>(capacity: 1 << 20) + disk
        let other = MemoryCacheLevel<String, Data>(capacity: 1 << 20) + disk
        let heard = Mutex<[Heard]>([])
        let subscription = disk.subscribe { change in
            let writers = CacheContext.writeOrigin.writers.count
            let traced = CacheContext.trace != nil
            heard.withLock { $0.append(Heard(change: change, writersInListener: writers, traced: traced)) }
        }
        defer { subscription.cancel() }
        try await other.set(Data("old".utf8), forKey: "k")
        #expect(try await other.getIfPresent("k") == Data("old".utf8))
        heard.withLock { $0 = [] }

        let trace = RequestTrace()
        try await trace.record { try await writing.set(Data("new".utf8), forKey: "k") }
        #expect(await poll { heard.withLock { !$0.isEmpty } })
        let report = try #require(heard.withLock { $0.first })
        #expect(report.change.invalidation == .key("k"))
        #expect(report.change.isLocalWrite)
        // The writing stack's id, and only it: that stack skips the report.
        #expect(report.change.writeOrigin?.writers == [writing.stack.writer])
        #expect(report.change.isWrite(by: writing.stack.writer))
        #expect(!report.change.isWrite(by: other.stack.writer))
        // Delivered detached: no write origin, no trace of the writing request.
        #expect(report.writersInListener == 0)
        #expect(!report.traced)
        // The other stack dropped the key and reads the new value; the writer kept its own.
        #expect(await poll { (try? await other.getIfPresent("k")) == Data("new".utf8) })
        #expect(try await writing.getIfPresent("k") == Data("new".utf8))
    }

    /// A change from elsewhere (another level on the directory) is no local write.
    @Test func aChangeFromElsewhereIsNoLocalWrite() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let heard = Mutex<[CacheChange<String>]>([])
        let subscription = disk.subscribe { change in heard.withLock { $0.append(change) } }
        defer { subscription.cancel() }
        try await disk.set(Data("a".utf8), forKey: "k")
        _ = try await disk.getIfPresent("k")
        let elsewhere = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        try await elsewhere.set(Data("b".utf8), forKey: "k")
        #expect(await poll { heard.withLock { $0.contains { !$0.isLocalWrite && $0.invalidation == .key("k") } } })
        #expect(heard.withLock { $0.filter { !$0.isLocalWrite }.allSatisfy { $0.writeOrigin == nil } })
    }
}
