import Strata
import StrataRedis
import Testing

/// A negative `defaultTTL:` made every set a past deadline, which Redis takes
/// as a delete: a level that keeps nothing, without a word. Rejected at init,
/// before any connection.
@Suite struct RedisNegativeDefaultTTLTests {
    @Test func aNegativeDefaultTTLIsRejectedAtInit() {
        #expect(throws: ExpiryError.self) {
            _ = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:1", prefix: "negative-ttl:", defaultTTL: .seconds(-1))
        }
    }
}
