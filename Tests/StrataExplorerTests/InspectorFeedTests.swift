import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// The inspector's feed over a real pipeline (memory, disk, origin): the
/// listing of a level and a preview that counts no get anywhere.
@Suite struct InspectorFeedTests {
    @Test func listsALevelAndPreviewsAKeyWithItsHolders() async throws {
        let pipeline = try Pipeline(PipelineSpec.demo)
        let model = ExplorerModel(pipeline: pipeline)
        await model.execute(.set(key: "user:7", value: "hello"))
        await model.execute(.get(key: "only-origin"))
        let feed = InspectorFeed(pipeline: pipeline)
        _ = feed.listing(level: 0)  // opens L1 (its first fetch starts)
        await feed.fetch(0)
        let listing = try #require(feed.listing(level: 0))
        #expect(listing.keys.contains { $0.key == "user:7" && $0.size == 5 })
        let first = feed.rows(level: 0, filter: "USER", sort: .key, descending: false)
        #expect(first.rows.map(\.key) == ["user:7"], "the filter ignores case")
        let again = feed.rows(level: 0, filter: "USER", sort: .key, descending: false)
        #expect(first.rows.withUnsafeBufferPointer { $0.baseAddress } == again.rows.withUnsafeBufferPointer { $0.baseAddress },
                "an unchanged frame reuses the arranged rows")
        let before = pipeline.levels.map { $0.statistics.snapshot().gets }
        let preview = await feed.peek("user:7", level: 0)
        #expect(preview.value == Data("hello".utf8))
        #expect(preview.holders == pipeline.levels.filter { $0.cache.levelInspector != nil }.map(\.spec.name))
        #expect(preview.uninspectable == ["origin"])
        #expect(pipeline.levels.map { $0.statistics.snapshot().gets } == before, "a preview is no get")
        let none = await feed.peek("never-set", level: 0)
        #expect(none.value == nil && none.holders.isEmpty)
        let origin = pipeline.levels.firstIndex { $0.spec.name == "origin" }!
        _ = feed.listing(level: origin)
        await feed.fetch(origin)
        #expect(feed.listing(level: origin)?.error?.contains("keeps no keys to list") == true)
        await model.shutdown()
    }
}
