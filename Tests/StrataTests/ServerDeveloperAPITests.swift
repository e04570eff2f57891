import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Small things a server developer reaches for (#32): a memory level sized by
/// count alone, JSON with the encoder the service already configured.
@Suite struct ServerDeveloperAPITests {
    struct Profile: Codable, Equatable, Sendable {
        let name: String
        let joined: Date
    }

    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func aCountOnlyMemoryLevelKeepsAtMostThatManyEntries(policy: EvictionPolicy) async throws {
        let level = MemoryCacheLevel<Int, Profile>(countLimit: 100, policy: policy)
        for i in 0..<1_000 { try await level.set(Profile(name: "p\(i)", joined: Date(timeIntervalSince1970: 0)), forKey: i) }
        #expect(level.count <= 100 && level.count > 0, "\(level.count) entries held under a limit of 100")
        try await level.set(Profile(name: "last", joined: Date(timeIntervalSince1970: 0)), forKey: 5_000)
        #expect(level.value(forKey: 5_000)?.name == "last" || policy == .adaptive, "LRU keeps the latest")
    }

    @Test func theJSONCodecUsesTheEncoderAndDecoderGiven() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let encoder = JSONEncoder(), decoder = JSONDecoder()
        encoder.dateEncodingStrategy = .iso8601
        decoder.dateDecodingStrategy = .iso8601
        let disk = try DiskCacheLevel<String, Profile>(name: "p", directory: dir.url, capacity: 1 << 20,
                                                       codec: .json(encoder: encoder, decoder: decoder))
        let profile = Profile(name: "ada", joined: Date(timeIntervalSince1970: 1_700_000_000))
        try await disk.set(profile, forKey: "u1")
        #expect(try await disk.getIfPresent("u1") == profile)
        let files = try FileManager.default.subpathsOfDirectory(atPath: dir.path)
            .compactMap { FileManager.default.contents(atPath: dir.path + "/" + $0) }
        #expect(files.contains { String(decoding: $0, as: UTF8.self).contains("\"joined\":\"2023-11-14T22:13:20Z\"") },
                "no entry file holds the date as ISO-8601")
        let transformer = CodableTransformer<Profile>(encoder: encoder, decoder: decoder)
        let data = try await transformer.inverseTransform(profile)
        #expect(String(decoding: data, as: UTF8.self).contains("2023-11-14T22:13:20Z"))
        #expect(try await transformer.transform(data) == profile)
    }
}
