import Foundation
import Strata
import StrataTestSupport
import Testing

/// A damaged expiry field in an entry's header must not make the entry live
/// longer: the file reads as corrupt (a miss), like any other damage.
@Suite struct DiskExpiryFieldCorruptionTests {
    @Test func aZeroedExpiryFieldDoesNotMakeAnEntryLiveForever() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 100_000, clock: clock)
        try await disk.set(Data("v".utf8), forKey: "k", ttl: .seconds(10))
        let file = try #require(dir.entryFiles().first)
        let handle = try #require(FileHandle(forWritingAtPath: dir.path + "/" + file))
        try handle.seek(toOffset: 24)  // the expiry field: 0 is "never"
        handle.write(Data(repeating: 0, count: 8))
        try handle.close()
        clock.advance(by: .seconds(11))
        let reopened = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 100_000, clock: clock)
        #expect(try await reopened.getIfPresent("k") == nil, "an entry outlived its TTL through a damaged header")
        #expect(try await disk.getIfPresent("k") == nil, "an entry outlived its TTL through a damaged header")
    }
}
