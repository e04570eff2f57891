import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The directory's delete lock never holds up a read: a get that meets an
/// expired entry while another process holds the lock (a remove or clear
/// there) answers a miss at once and leaves the file for later.
@Suite struct DiskDeleteLockWaitTests {
    @Test func aReadOfAnExpiredEntryDoesNotWaitForTheDeleteLock() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock(SystemClock().now())
        let path = dir.url.appendingPathComponent("disk")
        let disk = try DiskCacheLevel<String, String>(directory: path, capacity: 1 << 20, codec: .string, clock: clock)
        try await disk.set("v", forKey: "k", ttl: .seconds(1))
        clock.advance(by: .seconds(2))
        // Another process's remove or clear: the lock held shared.
        let fd = open(path.path + "/.delete-lock", O_RDWR | O_CREAT, 0o600)
        #expect(flock(fd, LOCK_SH) == 0)
        let done = Atomic<Bool>(false)
        let read = Task.detached {
            let value = try? await disk.getIfPresent("k")
            done.store(true, ordering: .sequentiallyConsistent)
            return value
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while !done.load(ordering: .sequentiallyConsistent) && ContinuousClock.now < deadline { await Task.yield() }
        let answeredWhileHeld = done.load(ordering: .sequentiallyConsistent)
        flock(fd, LOCK_UN); close(fd)
        #expect(await read.value == .some(nil), "expired: a miss")
        #expect(answeredWhileHeld, "the read waited for the delete lock")
        // Once the lock is free, the next read deletes the file.
        #expect(try await disk.getIfPresent("k") == nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: path.path).filter { !$0.hasPrefix(".") }
        #expect(names.isEmpty, "the expired entry's file is gone: \(names)")
    }
}
