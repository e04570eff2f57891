import Foundation
import Logging
import OpenCombineShim
import Strata
import StrataCombine
import StrataTestSupport
import Synchronization
import Testing

/// Every code sample of Carlos's README (spring-media/Carlos, 1.x), in
/// Strata, compiled and run (#34). Each test names the sample it answers;
/// docs/migrating.md shows them side by side. Where Carlos returns a
/// publisher Strata returns a value (`async throws`); the Combine form is
/// still there through `StrataCombine` (samples 3, 4 and 20).
@Suite(.serialized) struct CarlosReadmeSamples {
    /// Sample 2: a memory level in front of a disk level.
    @Test func memoryComposedWithDisk() async throws {
        let directory = TemporaryDirectory("carlos-2")
        defer { directory.remove() }
        let cache = MemoryCacheLevel<String, Data>(capacity: 64 << 20)
            .compose(try DiskCacheLevel<String, Data>(directory: directory.url, capacity: 100 << 20))
        try await cache.set(Data("v".utf8), forKey: "key")
        #expect(try await cache.get("key") == Data("v".utf8))
    }

    /// Samples 3 and 4: a get as a publisher, its failure, and cancelling it.
    @Test func aGetAsAPublisherAndCancellingIt() async throws {
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let printed = Mutex<[String]>([])
        let cancellable = cache.getPublisher("key")
            .sink(
                receiveCompletion: { completion in
                    if case let .failure(error) = completion {
                        printed.withLock { $0.append("An error occurred :( \(error)") }
                    }
                },
                receiveValue: { value in
                    printed.withLock { $0.append("I found \(value)!") }
                }
            )
        #expect(await poll { printed.withLock { $0 } == ["An error occurred :( memory: get key: no level had a value"] })
        cancellable.cancel()

        let cancelled = Mutex(false)
        let slow = BasicFetcher<String, String> { _ in try await Task.sleep(for: .seconds(30)); return "late" }
        let pending = slow.getPublisher("key")
            .handleEvents(receiveCancel: { cancelled.withLock { $0 = true } })
            .sink(receiveCompletion: { _ in }, receiveValue: { _ in })
        pending.cancel()
        #expect(cancelled.withLock { $0 }, "Looks like somebody canceled this request!")
    }

    /// Sample 5: memory, disk and the network, in that order.
    @Test func memoryDiskAndNetwork() async throws {
        let server = try await OriginServer()
        let directory = TemporaryDirectory("carlos-5")
        defer { directory.remove() }
        let cache = MemoryCacheLevel<URL, Data>(capacity: 64 << 20)
            .compose(try DiskCacheLevel<URL, Data>(directory: directory.url, capacity: 100 << 20))
            .compose(NetworkFetcher())
        #expect(try await cache.get(server.url("/value/7")) == Data("value:7".utf8))
        await server.stop()
    }

    /// Samples 6 and 7: keys transformed before the network (a string that
    /// is not a URL fails, with the transformer's own error as the cause).
    @Test func keysTransformedForTheNetwork() async throws {
        enum URLTransformationError: Error { case invalidURLString }
        let server = try await OriginServer()
        let transformedCache = NetworkFetcher().transformKeys(
            OneWayTransformationBox<String, URL>(transform: { string in
                guard let url = URL(string: string), url.scheme != nil else { throw URLTransformationError.invalidURLString }
                return url
            })
        )
        let cache = MemoryCacheLevel<String, Data>(capacity: 1 << 20).compose(transformedCache)
        #expect(try await cache.get(server.url("/value/6").absoluteString) == Data("value:6".utf8))
        // In a stack, a level's failure names the level and the key; its cause is the transformer's error.
        let failure = await #expect(throws: FetchError.self) { try await cache.get("") }
        #expect(failure?.cause(as: URLTransformationError.self) != nil)
        await server.stop()
    }

    struct Image: Hashable, Sendable {
        let identifier: String
        let url: URL
    }

    /// Samples 8, 9 and 19: a stack keyed by a struct, each level keyed its
    /// own way (the struct is `Hashable` by its fields: Swift writes the
    /// conformance Carlos's sample 19 wrote by hand).
    @Test func eachLevelKeyedItsOwnWay() async throws {
        let server = try await OriginServer()
        let directory = TemporaryDirectory("carlos-8")
        defer { directory.remove() }
        let imageToString = OneWayTransformationBox<Image, String>(transform: { $0.identifier })
        let imageToURL = OneWayTransformationBox<Image, URL>(transform: { $0.url })
        let memoryLevel = MemoryCacheLevel<String, Data>(capacity: 1 << 20).transformKeys(imageToString)
        let diskLevel = try DiskCacheLevel<String, Data>(directory: directory.url, capacity: 1 << 20).transformKeys(imageToString)
        let networkLevel = NetworkFetcher().transformKeys(imageToURL)
        let cache = memoryLevel.compose(diskLevel).compose(networkLevel)

        let image = Image(identifier: "550e8400-e29b-41d4-a716-446655440000", url: server.url("/value/image"))
        let value = try await cache.get(image)
        #expect(value == Data("value:image".utf8), "Found \(value)!")
        await server.stop()
    }

    /// Sample 10: a key transformer that only takes http URLs, over the
    /// image cache preset (a key it declines is a miss).
    @Test func aConditionedKeyTransformer() async throws {
        let directory = TemporaryDirectory("carlos-10")
        defer { directory.remove() }
        let transformer = OneWayTransformationBox<String, URL>(transform: { key in
            guard let url = URL(string: key) else { throw URLError(.badURL) }
            return url
        }).conditioned { key in key.hasPrefix("http") }
        let cache = CacheProvider.imageCache(directory: directory.url).transformKeys(transformer)
        #expect(try await cache.getIfPresent("ftp://example.invalid/x.png") == nil)
    }

    /// Sample 11: values transformed both ways (an image stored as bytes).
    @Test func valuesTransformedBothWays() async throws {
        let png = try Data(contentsOf: Self.fixture("tiny.png"))
        let dataTransformer = TwoWayTransformationBox<Data, CachedImage>(
            transform: { data in try ImageTransformer.parse(data) },
            inverseTransform: { image in image.data })
        let bytes = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        let memoryLevel = bytes.transformValues(dataTransformer)
        try await memoryLevel.set(try ImageTransformer.parse(png), forKey: "logo")
        #expect(try await memoryLevel.get("logo").format == .png)
        #expect(bytes.value(forKey: "logo") == png)
    }

    /// Sample 12: a value transformer that applies only when a condition holds.
    @Test func aConditionedValueTransformer() async throws {
        let directory = TemporaryDirectory("carlos-12")
        defer { directory.remove() }
        let myCondition = true
        let transformer = JSONTransformer().conditioned({ _ in myCondition }, inverseCondition: { _ in myCondition })
        let cache = CacheProvider.dataCache(directory: directory.url).transformValues(transformer)
        let url = URL(string: "http://127.0.0.1:9/doc.json")!
        try await cache.set(JSONValue(["a": 1]), forKey: url)
        #expect(try await cache.get(url)["a"]?.number == 1)
    }

    /// Sample 13: post-processing: the decorated cache answers upper case,
    /// the level it decorates keeps what was set.
    @Test func postProcessing() async throws {
        let transformer = OneWayTransformationBox<String, String>(transform: { $0.uppercased() })
        let memoryCache = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let transformedCache = memoryCache.postProcess(transformer)
        try await memoryCache.set("test String", forKey: "key")
        #expect(try await memoryCache.get("key") == "test String")
        #expect(try await transformedCache.get("key") == "TEST STRING")
    }

    /// Sample 14: a conditioned post-processor over the data cache preset
    /// (values of 1,000 bytes or more are not processed: a miss).
    @Test func aConditionedPostProcessor() async throws {
        let directory = TemporaryDirectory("carlos-14")
        defer { directory.remove() }
        let processor = OneWayTransformationBox<Data, Data>(transform: { value in
            guard let upper = String(data: value, encoding: .utf8)?.uppercased().data(using: .utf8) else {
                throw FetchError.conditionNotSatisfied
            }
            return upper
        }).conditioned { value in value.count < 1000 }
        let cache = CacheProvider.dataCache(directory: directory.url).postProcess(processor)
        let url = URL(string: "http://127.0.0.1:9/short")!
        try await cache.set(Data("short".utf8), forKey: url)
        #expect(try await cache.get(url) == Data("SHORT".utf8))
    }

    /// Sample 15: a post-processor that also sees the key.
    @Test func aPostProcessorThatSeesTheKey() async throws {
        let memoryCache = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let transformedCache = memoryCache.conditionedPostProcess(
            ConditionedOneWayTransformationBox<String, String, String>(conditionalTransformClosure: { key, value in
                key == "some sentinel value" ? value.uppercased() : value
            }))
        try await memoryCache.set("test String", forKey: "some sentinel value")
        #expect(try await memoryCache.get("some sentinel value") == "test String")
        #expect(try await transformedCache.get("some sentinel value") == "TEST STRING")
    }

    /// Sample 16: a value transformation both ways that sees the key.
    @Test func aValueTransformationThatSeesTheKey() async throws {
        let memoryCache = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let transformedCache = memoryCache.conditionedValueTransformation(
            ConditionedTwoWayTransformationBox<String, String, Int>(
                conditionalTransformClosure: { key, _ in key == "some sentinel value" ? 1 : 0 },
                conditionalInverseTransformClosure: { _, value in value > 0 ? "Positive" : "Null or negative" }))
        try await memoryCache.set("test String", forKey: "some sentinel value")
        #expect(try await memoryCache.get("some sentinel value") == "test String")
        #expect(try await transformedCache.get("some sentinel value") == 1)
        try await transformedCache.set(5, forKey: "test")
        #expect(try await memoryCache.get("test") == "Positive")
    }

    /// Sample 17: a transformer composed with its inverse is the identity.
    @Test func aTransformerComposedWithItsInverse() async throws {
        let firstTransformer = ImageTransformer()  // Data -> CachedImage
        let secondTransformer = ImageTransformer().invert()  // CachedImage -> Data
        let identityTransformer = firstTransformer.compose(secondTransformer)
        let png = try Data(contentsOf: Self.fixture("tiny.png"))
        #expect(try await identityTransformer.transform(png) == png)
    }

    /// Sample 18: a whole stack pooled (concurrent gets of one key share one read).
    @Test func aPooledStack() async throws {
        let reads = Mutex(0)
        let networkLevel = BasicFetcher<String, String> { key in
            reads.withLock { $0 += 1 }
            try await Task.sleep(for: .milliseconds(200))
            return "value of \(key)"
        }
        let cache = (MemoryCacheLevel<String, String>(capacity: 1 << 20).compose(networkLevel)).pooled()
        async let first = cache.get("k")
        async let second = cache.get("k")
        #expect(try await [first, second] == ["value of k", "value of k"])
        #expect(reads.withLock { $0 } == 1)
    }

    /// Sample 20: a batch of gets, as a publisher of the values found.
    @Test func aBatchOfGets() async throws {
        let cache = MemoryCacheLevel<String, Int>(countLimit: 1000)
        for iter in 0..<99 { try await cache.set(iter, forKey: "key_\(iter)") }
        let keysToBatch = (0..<100).map { "key_\($0)" }
        let values = await cache.batchGetSome(keysToBatch)
        #expect(values.count == 99, "Got \(values.count) values in total")
    }

    /// Sample 21: a level asked only while a setting is on.
    @Test func aConditionedLevel() async throws {
        let appSettingIsEnabled = Atomic(false)
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        try await cache.set("v", forKey: "k")
        let conditionedCache = cache.conditioned { _ in appSettingIsEnabled.load(ordering: .relaxed) }
        #expect(try await conditionedCache.getIfPresent("k") == nil)
        appSettingIsEnabled.store(true, ordering: .relaxed)
        #expect(try await conditionedCache.getIfPresent("k") == "v")
    }

    /// Sample 22: two lanes, chosen per key.
    @Test func twoLanes() async throws {
        let directory = TemporaryDirectory("carlos-22")
        defer { directory.remove() }
        let lane1 = MemoryCacheLevel<URL, Data>(capacity: 1 << 20)  // the lanes have the same key and value types
        let lane2 = CacheProvider.dataCache(directory: directory.url)
        let switched = switchLevels(cacheA: lane1, cacheB: lane2) { key in
            key.scheme == "http" ? .cacheA : .cacheB
        }
        let url = URL(string: "http://127.0.0.1:9/a")!
        try await switched.set(Data("a".utf8), forKey: url)
        #expect(lane1.value(forKey: url) == Data("a".utf8))
    }

    /// Samples 23 and 24: memory warnings, then no more of them.
    @Test func memoryWarnings() async throws {
        let source = MemoryPressure()
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        try await cache.set("v", forKey: "k")
        let token = cache.listenToMemoryWarnings(from: source)
        await source.simulateWarning()
        #expect(await poll { cache.count == 0 }, "a memory warning empties the memory level")
        source.unsubscribe(token)
        try await cache.set("v", forKey: "k")
        await source.simulateWarning()
        #expect(cache.count == 1, "a warning after unsubscribing emptied the level")
    }

    final class CacheManager: Sendable {
        let cache: BasicCache<URL, Data>
        init(injectedCache: BasicCache<URL, Data>) { self.cache = injectedCache }
    }

    /// Sample 25: a stack erased to one type for injection (`normalize()`).
    @Test func aStackErasedForInjection() async throws {
        let directory = TemporaryDirectory("carlos-25")
        defer { directory.remove() }
        let manager = CacheManager(injectedCache: CacheProvider.dataCache(directory: directory.url).pooled().normalize())
        let url = URL(string: "http://127.0.0.1:9/b")!
        try await manager.cache.set(Data("b".utf8), forKey: url)
        #expect(try await manager.cache.get(url) == Data("b".utf8))
    }

    final class MyLevel: CacheLevel {
        let stored = Mutex<[Int: Float]>([:])
        func getIfPresent(_ key: Int) async throws -> Float? { stored.withLock { $0[key] } }  // nil: a miss
        func set(_ value: Float, forKey key: Int) async throws { stored.withLock { $0[key] = value } }
        func remove(_ key: Int) async throws { _ = stored.withLock { $0.removeValue(forKey: key) } }
        func clear() async { stored.withLock { $0.removeAll() } }
        func onMemoryWarning() async {}
    }

    struct CustomFetcher: Fetcher {
        func getIfPresent(_ key: String) async throws -> String? { "Found an hardcoded value :)" }
    }

    /// Samples 26 and 27: a level and a fetcher of your own.
    @Test func aLevelAndAFetcherOfYourOwn() async throws {
        let level = MyLevel()
        try await level.set(1.5, forKey: 1)
        #expect(try await level.get(1) == 1.5)
        #expect(try await CustomFetcher().get("any") == "Found an hardcoded value :)")
    }

    /// Sample 28: Strata logs through swift-log; plug your logging library
    /// in as a `LogHandler`, once, at start-up (`LoggingSystem.bootstrap`).
    @Test func loggingGoesThroughSwiftLog() {
        let logger = Logger(label: "strata.provider")
        #expect(logger.label == "strata.provider")
    }

    static func fixture(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../StrataTestSupport/Fixtures/\(name)").standardized
    }

    func poll(_ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}
