import Foundation
@testable import Strata
import StrataTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A lock taken on a file that was deleted and recreated between the `open`
/// and the `flock` (a directory removed by a user or a tmp reaper and made
/// again by another process) locks nothing anyone else uses: the other
/// process holds the lock on the new file. The lock must be retaken on the
/// file now at the path. (From the closing notes' open list: the key-value
/// store's lock on its directory could let two processes write at once and
/// lose one's key.)
@Suite struct FileLockReplacedFileTests {
    final class Flag: Sendable { let value = Atomic<Bool>(false) }

    /// Replaces `path` (a directory, or a file when `isDirectory` is false),
    /// then has another thread lock the new one until `until` is signalled
    /// (or for 200 ms when nil); returns once it holds the lock, and the
    /// flag it sets just before it lets go.
    func replaceAndHold(_ path: String, isDirectory: Bool, until: DispatchSemaphore? = nil) -> Flag {
        if isDirectory {
            rmdir(path)
            mkdir(path, 0o700)
        } else {
            unlink(path)
        }
        let released = Flag()
        let held = DispatchSemaphore(value: 0)
        Thread {
            let fd = open(path, isDirectory ? O_RDONLY | O_DIRECTORY : O_RDWR | O_CREAT, 0o600)
            flock(fd, LOCK_EX)
            held.signal()
            // Holding, as the other process's write would.
            if let until { until.wait() } else { usleep(200_000) }
            released.value.store(true, ordering: .sequentiallyConsistent)
            flock(fd, LOCK_UN)
            close(fd)
        }.start()
        held.wait()
        return released
    }

    @Test(arguments: [true, false])
    func aLockOnAReplacedFileIsRetakenOnTheNewOne(isDirectory: Bool) throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let path = dir.url.appendingPathComponent(isDirectory ? "store" : ".lock").path
        if isDirectory { mkdir(path, 0o700) } else { close(open(path, O_RDWR | O_CREAT, 0o600)) }
        let released = Mutex<Flag?>(nil)
        let enteredAfterRelease = FileIO.withLock(
            path, flags: isDirectory ? O_RDONLY | O_DIRECTORY : O_RDWR | O_CREAT,
            afterOpen: { let flag = replaceAndHold(path, isDirectory: isDirectory); released.withLock { $0 = flag } }
        ) {
            released.withLock { $0!.value.load(ordering: .sequentiallyConsistent) }
        }
        #expect(enteredAfterRelease == true, "the body ran while another thread held the lock on the file now at the path")
    }

    @Test func aTryLockOnAReplacedFileSeesTheNewHolder() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let path = dir.url.appendingPathComponent(".delete-lock").path
        close(open(path, O_RDWR | O_CREAT, 0o600))
        let done = DispatchSemaphore(value: 0)
        let ran = FileIO.withLock(path, flags: O_RDWR | O_CREAT, waiting: false,
                                  afterOpen: { _ = replaceAndHold(path, isDirectory: false, until: done) }) { true }
        done.signal()
        #expect(ran == nil, "a try-lock on the old file succeeded while the new one was held")
    }

    /// Nothing replaced: the body runs once, and holds the lock while it
    /// runs (another open file of the same path cannot take it).
    @Test func anUnreplacedFileIsLockedWhileTheBodyRuns() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        func heldElsewhere(_ path: String, flags: Int32) -> Bool {
            let fd = open(path, flags, 0o600)
            defer { close(fd) }
            return flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
        }
        let runs = Mutex(0)
        let directory = dir.url.path
        let onDirectory = FileIO.withLockOnDirectory(directory) {
            runs.withLock { $0 += 1 }
            return heldElsewhere(directory, flags: O_RDONLY | O_DIRECTORY)
        }
        let onLockFile = FileIO.withDirectoryLock(directory) {
            runs.withLock { $0 += 1 }
            return heldElsewhere(directory + "/.lock", flags: O_RDWR)
        }
        #expect(onDirectory && onLockFile)
        #expect(runs.withLock { $0 } == 2)
        #expect(!heldElsewhere(directory, flags: O_RDONLY | O_DIRECTORY), "released after the body")
    }
}
