import Foundation
@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// A back-fill is the stack's own write: the report a shared store makes of
/// it names the stack, which skips it (it would otherwise void its other
/// back-fills of the key and end the sharing of reads in flight, as for a
/// change made by another writer).
@Suite struct BackfillOwnReportTests {
    /// What `disk` reports, while it is held.
    final class Reports: Sendable {
        private let heard = Mutex<[CacheChange<String>]>([])
        private let subscription = Mutex<CacheSubscription?>(nil)
        init(of disk: DiskCacheLevel<String, Data>) {
            subscription.withLock { $0 = disk.subscribe { [weak self] change in self?.append(change) } }
        }
        private func append(_ change: CacheChange<String>) { heard.withLock { $0.append(change) } }
        var first: CacheChange<String>? { heard.withLock { $0.first } }
        deinit { subscription.withLock { $0?.cancel() } }
    }

    @Test func aBackfillIntoADiskUpperLevelIsReportedAsTheStacksWrite() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let origin = BasicFetcher<String, Data>(get: { Data($0.utf8) })
        let stack = disk + origin
        let reports = Reports(of: disk)
        #expect(try await stack.getIfPresent("k") == Data("k".utf8))
        await stack.waitForPendingWrites()
        #expect(await poll { reports.first != nil })
        let report = try #require(reports.first)
        #expect(report.invalidation == .key("k"))
        #expect(report.isWrite(by: stack.stack.writer), "writers: \(report.writeOrigin?.writers ?? [])")
    }

    @Test func aBackfillThroughANestedStackNamesBothStacks() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let origin = BasicFetcher<String, Data>(get: { Data($0.utf8) })
        let inner = MemoryCacheLevel<String, Data>(capacity: 1 << 20) + disk
        let stack = inner + origin
        let reports = Reports(of: disk)
        #expect(try await stack.getIfPresent("k") == Data("k".utf8))
        await stack.waitForPendingWrites()
        #expect(await poll { reports.first != nil })
        let report = try #require(reports.first)
        #expect(report.isWrite(by: inner.stack.writer))
        #expect(report.isWrite(by: stack.stack.writer), "writers: \(report.writeOrigin?.writers ?? [])")
        // Neither stack took its own back-fill for a change from elsewhere.
        #expect(stack.invalidationsApplied == 0 && inner.invalidationsApplied == 0)
    }
}
