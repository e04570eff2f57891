import Foundation
@testable import Strata
import StrataTestSupport
import Testing

enum RoleKey: String, Codable, Hashable, CacheKeyConvertible { case admin, guest }
enum TierKey: Int, Hashable, CacheKeyConvertible { case gold = 3 }
struct TenantKey: Codable, Hashable, CacheKeyConvertible {
    let org: String
    let id: Int
    let since: Date
}
struct SkuKey: LosslessStringConvertible, Hashable, CacheKeyConvertible {
    let code: String
    init?(_ description: String) { guard description.hasPrefix("SKU-") else { return nil }; code = description }
    var description: String { code }
}

/// The byte forms keys get in one line (`extension K: CacheKeyConvertible {}`),
/// documented in `CacheKeyConvertible+Defaults.swift`: stable across
/// processes, so a disk or Redis level names them alike everywhere.
@Suite struct KeyConversionTests {
    @Test func integersOfEveryWidthAreTheirDecimalText() {
        #expect(Int8(-5).cacheKeyBytes == Array("-5".utf8))
        #expect(UInt64.max.cacheKeyBytes == Array("18446744073709551615".utf8))
        #expect(Int32(7).cacheKeyBytes == Int(7).cacheKeyBytes)
    }

    @Test func rawValuesStringsAndCodableStructsHaveDocumentedForms() {
        #expect(RoleKey.admin.cacheKeyBytes == Array("admin".utf8), "a raw-value enum that is also Codable stores as its raw value")
        #expect(TierKey.gold.cacheKeyBytes == Array("3".utf8))
        #expect(SkuKey("SKU-1")!.cacheKeyBytes == Array("SKU-1".utf8))
        let tenant = TenantKey(org: "acme", id: 7, since: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(String(decoding: tenant.cacheKeyBytes, as: UTF8.self) == #"{"id":7,"org":"acme","since":"2023-11-14T22:13:20Z"}"#)
    }

    /// A second level on the same directory (as another process) finds a
    /// struct key the first stored.
    @Test func aCodableKeyNamesTheSameFileInAnotherLevel() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let tenant = TenantKey(org: "acme", id: 7, since: Date(timeIntervalSince1970: 1_700_000_000))
        let first = try DiskCacheLevel<TenantKey, String>(name: "t", directory: dir.url, capacity: 1 << 20)
        try await first.set("row", forKey: tenant)
        let second = try DiskCacheLevel<TenantKey, String>(name: "t", directory: dir.url, capacity: 1 << 20)
        #expect(try await second.getIfPresent(tenant) == "row")
        #expect(try await second.getIfPresent(TenantKey(org: "acme", id: 8, since: tenant.since)) == nil)
    }
}
