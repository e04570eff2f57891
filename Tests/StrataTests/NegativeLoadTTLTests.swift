@testable import Strata
import Testing

/// A negative TTL given to a loading get is rejected as one given to a set
/// is (``ExpiryError/invalidTTL(_:)``, the cause of the get's `FetchError`),
/// never taken as "load every time and keep nothing".
@Suite struct NegativeLoadTTLTests {
    @Test func aLoadingGetAndGetAllRejectANegativeTTL() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let stack = memory + BasicFetcher<String, String> { _ in nil }
        let one = await #expect(throws: FetchError.self) { try await stack.get("k", ttl: .seconds(-1)) { _ in "v" } }
        #expect(one?.cause(as: ExpiryError.self) == .invalidTTL("-1.0 seconds"), "\(String(describing: one))")
        let many = await #expect(throws: FetchError.self) { try await stack.getAll(["a"], ttl: .seconds(-1)) { _ in ["a": "v"] } }
        #expect(many?.cause(as: ExpiryError.self) == .invalidTTL("-1.0 seconds"), "\(String(describing: many))")
        let safe = stack.failSafe(maxStale: .seconds(60))
        await #expect(throws: FetchError.self) { try await safe.get("k", ttl: .seconds(-1)) { _ in "v" } }
        // Refused on a hit too (the top level answers it without suspending).
        try memory.store("held", forKey: "h")
        let hit = await #expect(throws: FetchError.self) { try await stack.get("h", ttl: .seconds(-1)) { _ in "v" } }
        #expect(hit?.cause(as: ExpiryError.self) == .invalidTTL("-1.0 seconds"))
        // Zero is a TTL: loaded, kept for no time.
        #expect(try await stack.get("z", ttl: .zero) { _ in "v" } == "v")
    }
}
