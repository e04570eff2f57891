import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// Ready-made caches for URLs: memory → disk → pooled network, each preset in
/// its own disk directory (`$XDG_CACHE_HOME/strata/provider-data`, `-json`,
/// `-image`), so presets never read or evict each other's files. If the disk
/// directory cannot be used, the preset logs a warning and runs memory →
/// network.
public enum CacheProvider {
    static let logger = Logger(label: "strata.provider")

    /// Bytes of a URL.
    public static func dataCache(
        directory: URL? = nil, memoryCapacity: Int = 50 << 20, diskCapacity: Int = 100 << 20,
        session: URLSession = .shared
    ) -> BasicCache<URL, Data> {
        pipeline(kind: "data", directory: directory, memoryCapacity: memoryCapacity, diskCapacity: diskCapacity,
                 origin: NetworkFetcher(session: session).normalize())
    }

    /// JSON documents (see ``JSONTransformer``); bytes are cached, parsed on read.
    public static func jsonCache(
        directory: URL? = nil, memoryCapacity: Int = 20 << 20, diskCapacity: Int = 100 << 20,
        session: URLSession = .shared
    ) -> BasicCache<URL, JSONValue> {
        let origin = NetworkFetcher(session: session).postProcess { data in
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])  // reject non-JSON before caching
            return data
        }
        return pipeline(kind: "json", directory: directory, memoryCapacity: memoryCapacity, diskCapacity: diskCapacity,
                        origin: origin.normalize())
            .transformValues(JSONTransformer()).normalize()
    }

    /// Images (see ``ImageTransformer``): a response that is not an image fails
    /// with ``ImageTransformerError`` and is never cached.
    public static func imageCache(
        directory: URL? = nil, memoryCapacity: Int = 50 << 20, diskCapacity: Int = 200 << 20,
        session: URLSession = .shared
    ) -> BasicCache<URL, CachedImage> {
        let origin = NetworkFetcher(session: session).postProcess { data in
            _ = try ImageTransformer.parse(data)
            return data
        }
        return pipeline(kind: "image", directory: directory, memoryCapacity: memoryCapacity, diskCapacity: diskCapacity,
                        origin: origin.normalize())
            .transformValues(ImageTransformer()).normalize()
    }

    /// One ``dataCache(directory:memoryCapacity:diskCapacity:session:)`` with the defaults, made at first use.
    public static let sharedDataCache = dataCache()
    /// One ``jsonCache(directory:memoryCapacity:diskCapacity:session:)`` with the defaults, made at first use.
    public static let sharedJSONCache = jsonCache()
    /// One ``imageCache(directory:memoryCapacity:diskCapacity:session:)`` with the defaults, made at first use.
    public static let sharedImageCache = imageCache()

    static func pipeline(kind: String, directory: URL?, memoryCapacity: Int, diskCapacity: Int,
                         origin: BasicCache<URL, Data>) -> BasicCache<URL, Data> {
        let memory = MemoryCacheLevel<URL, Data>(name: "memory", capacity: memoryCapacity)
        let name = "provider-\(kind)"
        let folder = directory?.appendingPathComponent(name) ?? DiskCacheLevel<URL, Data>.defaultDirectory(name: name)
        do {
            let disk = try DiskCacheLevel<URL, Data>(name: "disk", directory: folder, capacity: diskCapacity)
            return (memory + disk + origin.pooled()).normalize()
        } catch {
            logger.warning("disk level unavailable; caching in memory only", metadata: ["error": "\(error)"])
            return (memory + origin.pooled()).normalize()
        }
    }
}
