import Foundation
import Strata
import StrataRedis
import StrataTestSupport
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
        // Frames at one instant just after the fetch: no refresh is due between them (a slow run's would be).
        let now = ContinuousClock.now
        let listing = try #require(feed.listing(level: 0, now: now))
        #expect(listing.keys.contains { $0.key == "user:7" && $0.size == 5 })
        let first = feed.rows(level: 0, filter: "USER", sort: .key, descending: false, now: now)
        #expect(first.rows.map(\.key) == ["user:7"], "the filter ignores case")
        let again = feed.rows(level: 0, filter: "USER", sort: .key, descending: false, now: now)
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

extension InspectorFeedTests {
    /// The memory level ranks hot keys over all its keys: the hottest here
    /// sit past the 5,000 the table lists.
    @Test func hotKeysOfAMemoryLevelAreTheWholeLevels() async throws {
        let pipeline = try Pipeline(try PipelineFile.parse("""
            levels:
              - name: L1
                kind: memory
                capacity: 16MiB
              - name: origin
                kind: origin
                latency: 1ms
            """, file: "big.yaml"))
        let level = try #require(pipeline.levels.first)
        for i in 0..<8_000 { try await level.cache.set(Data("v".utf8), forKey: "key:\(i)") }
        let listed = try #require(try await level.cache.levelInspector?.keys(8_000)).map(\.key)
        let hottest = try #require(listed.last)
        for _ in 0..<3 { _ = try await level.cache.getIfPresent(hottest) }
        for _ in 0..<64 { _ = try await level.cache.getIfPresent(try #require(listed.first)) }
        try await level.cache.set(Data("v".utf8), forKey: "drain")
        let feed = InspectorFeed(pipeline: pipeline)
        _ = feed.listing(level: 0)
        await feed.fetch(0)
        let listing = try #require(feed.listing(level: 0))
        #expect(listing.keys.count == InspectorFeed.listLimit && !listing.keys.contains { $0.key == hottest })
        #expect(listing.hotSample == nil, "the whole level was ranked")
        #expect(listing.hot.contains { $0.key == hottest }, "\(listing.hot)")
    }

    @Test func expiryReadsInWholeSeconds() {
        let now = CacheInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
        #expect(InspectorFeed.expiry(nil, now: now) == "never")
        #expect(InspectorFeed.expiry(now.advanced(by: .milliseconds(90_900)), now: now).hasPrefix("in 90s ("))
        #expect(InspectorFeed.expiry(now.advanced(by: .seconds(300)), now: now).hasPrefix("in 5m ("))
        #expect(InspectorFeed.expiry(now.advanced(by: .milliseconds(250)), now: now).hasPrefix("in 250ms ("))
    }
}

/// The inspector over a pipeline with a Redis level (a real redis-server):
/// the level lists its keys by `SCAN`, and a preview finds the key there.
@Suite(.serialized) struct InspectorRedisFeedTests {
    @Test func aRedisLevelListsItsKeysAndAPreviewFindsThem() async throws {
        let server = try await RedisServer()
        let probe = try RedisClient(url: server.url)
        let noTouch = (try? await probe.send("CLIENT", "NO-TOUCH", "OFF")) != nil
        await probe.shutdown()
        let model = ExplorerModel(pipeline: try redisPipeline(server, prefix: "inspect:", shared: "ttl: 5m"))
        await model.withShutdown {
            // Subscribed first: a subscription confirmed later flushes L1 (anything may have changed).
            #expect(await ExplorerInvalidationTests.poll { !model.panes()[1].configuration.contains("not subscribed") })
            _ = await model.execute(.set(key: "user:1", value: "in redis"))
            let feed = InspectorFeed(pipeline: model.pipeline)
            _ = feed.listing(level: 1)
            await feed.fetch(1)
            let listing = feed.listing(level: 1)
            #expect(listing?.error == nil)
            let key = listing?.keys.first { $0.key == "user:1" }
            #expect(key?.size == "in redis".utf8.count)
            #expect(key?.ttlLeft.map { $0 > .seconds(200) && $0 <= .seconds(300) } == true, "\(String(describing: key))")
            #expect(listing != nil && listing?.hotSample == nil, "SCAN came back to cursor 0: hot keys of the whole level, not a sample")
            let preview = await feed.peek("user:1", level: 1)
            #expect(preview.value == Data("in redis".utf8) && preview.holders == ["L1", "shared"], "\(preview)")
            #expect(preview.countedAsAccess == (noTouch ? [] : ["shared"]), "redis-server \(noTouch ? "has" : "lacks") NO-TOUCH")
            let seconds = preview.expiry.flatMap { Int($0.dropFirst(3).prefix { $0.isNumber }) }
            #expect(seconds.map { (200...300).contains($0) } == true || preview.expiry?.hasPrefix("in 5m") == true, "\(preview)")
        }
        await server.kill()
    }
}
