import Foundation
import Strata
import StrataTestSupport
import Testing

@Suite(.serialized) struct CacheProviderTests {
    @Test func presetsFetchCacheAndKeepTheirOwnDirectories() async throws {
        let server = try await OriginServer()
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let data = CacheProvider.dataCache(directory: dir.url)
        let json = CacheProvider.jsonCache(directory: dir.url)
        let images = CacheProvider.imageCache(directory: dir.url)

        let url = server.url("/value/p")
        #expect(try await data.get(url) == Data("value:p".utf8))
        await data.waitForPendingWrites()
        #expect(try await data.get(url) == Data("value:p".utf8))
        #expect(try await server.stats().counts["/value/p"] == 1, "the second get came from a cache")

        let stats = try await json.get(server.url("/stats"))
        #expect(stats["counts"] != nil)

        let image = try await images.get(server.url("/file/tiny.png"))
        #expect(image.format == .png && image.width == 3 && image.height == 2)
        await #expect(throws: (any Error).self) { try await images.get(server.url("/value/not-an-image")) }
        await images.waitForPendingWrites()

        #expect(Set(dir.files()) == ["provider-data", "provider-json", "provider-image"])
        let imageFiles = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/provider-image").filter { $0.hasSuffix(".entry") }
        #expect(imageFiles.count == 1, "the non-image response was not cached")
        await server.stop()
    }

    @Test func sharedInstancesExist() {
        _ = CacheProvider.sharedDataCache
        _ = CacheProvider.sharedJSONCache
        _ = CacheProvider.sharedImageCache
    }
}
