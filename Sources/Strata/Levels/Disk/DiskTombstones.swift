import CStrataSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Design note: what stops a late back-fill after another process's remove.
//
// A back-fill (a stack's copy of what it read below, or a load's landing)
// never replaces a file (`rename` without replacing): a value written since
// its read wins. But a remove leaves no file, so a back-fill whose read
// began before the remove (the classic cache-aside race: one process changes
// the origin and removes the key while another's load of the old value is
// in flight) would land the removed value for every process on the
// directory, until its TTL. As Redis's level does, a remove leaves a
// tombstone: `<directory>/.strata-tombstones/<bucket>` holding when it
// happened (wall-clock nanoseconds, as 8 bytes); a clear leaves `all`. Keys
// share 4,096 buckets, so the tombstones are at most 4,097 small files
// whatever the rate of removes; a back-fill of a key whose bucket saw
// another key's remove during its read is declined too (it costs a later
// read, never a wrong answer).
// A back-fill whose read began before a tombstone of its key (or of `all`),
// or that does not say when its read began, is declined while the tombstone
// is young (twice ``CacheContext/backfillAgeLimit``: compositions drop
// older back-fills). The check and the landing run under the directory's
// delete lock shared; the tombstone and the delete under it exclusive, so
// no remove falls between them. Processes on one machine share the wall
// clock; a read's start is converted to it when the back-fill is made.
// A tombstone that could not be written whole (a full disk) is an empty or
// short file: it is read as made at its modification time plus a second,
// declining more back-fills, never fewer. On a read-only filesystem nothing
// can land, and a remove needs none. Old tombstones, and any dated further
// ahead than they live (the wall clock was stepped back: they would stop
// every back-fill for the size of the step), stop nothing and are deleted
// when a level opens the directory and by `removeExpired()`.
// A deleted directory takes its tombstones with it, so a directory without
// `.strata-tombstones` has an unknown past (made again by a level, by
// another process, by `mkdir`): a back-fill landing there is declined and
// leaves the tombstones' directory, holding a tombstone of all dated now;
// a level makes it so when it opens or makes the directory again. It is
// made aside and renamed into place, so it never exists without that
// tombstone: whoever finds it finds the history that matters.

/// The tombstones of a disk level's directory (see the note above).
struct DiskTombstones: Sendable {
    let directory: String

    init(entries directory: String) { self.directory = directory + "/" + Self.directoryName }

    static var directoryName: String { ".strata-tombstones" }
    static var allName: String { "all" }
    /// How many buckets keys share (a power of two).
    static var buckets: UInt64 { 4096 }

    /// How long a tombstone stops back-fills: twice the oldest read a composition still back-fills.
    static var lifetime: Duration { CacheContext.backfillAgeLimit * 2 }

    /// Slack added to the time of a tombstone read from its modification
    /// time (an incomplete one): the kernel's file times are coarse.
    static var incompleteSlack: Int64 { 1_000_000_000 }

    /// Wall-clock nanoseconds since 1970.
    static func wallNow() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec)
    }

    /// `readStartedAt` (this process's continuous clock) on the wall clock.
    static func wallTime(of readStartedAt: ContinuousClock.Instant) -> Int64 {
        let age = ContinuousClock.now - readStartedAt
        let (seconds, attoseconds) = age.components
        return wallNow() - (seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000)
    }

    /// The tombstone file of `id`'s entry (`nil`: of a clear).
    func path(_ id: EntryID?) -> String {
        guard let id else { return directory + "/" + Self.allName }
        return directory + "/" + String(id.low & (Self.buckets - 1), radix: 16)
    }

    /// Records a remove of `id`'s entry (`nil`: a clear) now. Call under the
    /// directory's exclusive delete lock, before deleting. Returns the errno
    /// when not even an empty tombstone could be made.
    func record(_ id: EntryID?) -> Int32? {
        let file = path(id)
        // Overwritten in place, never truncated: no new block once the file
        // exists (a full disk), and no flush on close (ext4 forces one for
        // a file truncated and written again).
        var fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0, errno == ENOENT {
            if let code = make() { return code }
            fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { return Self.failure(errno) }
        defer { close(fd) }
        Self.stamp(fd)
        return nil
    }

    /// Writes now into the tombstone open at `fd` (a short write is read by
    /// its modification time).
    private static func stamp(_ fd: Int32) {
        var now = wallNow().littleEndian
        _ = withUnsafeBytes(of: &now) { pwrite(fd, $0.baseAddress, 8, 0) }
    }

    /// Tells the tombstones' directories made aside apart.
    private static let asides = Atomic<Int>(0)

    /// Makes the tombstones' directory if there is none, holding a
    /// tombstone of all dated now: made aside, then renamed into place, so it
    /// never exists without it (see the note above). Returns the errno when
    /// it could not (the entries' directory is gone: `ENOENT`).
    @discardableResult
    func make() -> Int32? {
        if FileIO.directoryExists(directory) { return nil }
        let aside = directory + ".tmp-\(getpid())-\(Self.asides.add(1, ordering: .relaxed).newValue)"
        guard mkdir(aside, 0o700) == 0 else { return Self.failure(errno) }
        let all = aside + "/" + Self.allName
        defer { unlink(all); rmdir(aside) }  // left only when another made it first
        let fd = open(all, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return Self.failure(errno) }
        Self.stamp(fd)
        close(fd)
        if strata_rename_noreplace(aside, directory) == 0 { return nil }
        var code = errno
        if code == EINVAL || code == ENOSYS {  // a filesystem without it: replaces only an empty directory
            code = rename(aside, directory) == 0 ? 0 : errno
        }
        return [0, EEXIST, ENOTEMPTY].contains(code) ? nil : Self.failure(code)
    }

    /// `code`, unless it says the filesystem is read-only: nothing can land
    /// there either, so there is nothing for a tombstone to stop.
    private static func failure(_ code: Int32) -> Int32? { code == EROFS ? nil : code }

    /// Whether a tombstone made at `made` still stops back-fills at `now`:
    /// younger than its lifetime, and not dated further ahead than that (a
    /// wall clock stepped back since: it would stop every back-fill for the
    /// size of the step, and is swept).
    static func isLive(_ made: Int64, now: Int64) -> Bool {
        let lifetime = Int64(Self.lifetime.components.seconds) * 1_000_000_000
        return made >= now - lifetime && made <= now + lifetime
    }

    /// The latest remove recorded for `id`'s entry or for all, if still live.
    func latest(for id: EntryID, now: Int64 = wallNow()) -> Int64? {
        [time(of: path(id)), time(of: path(nil))].compactMap { $0 }.filter { Self.isLive($0, now: now) }.max()
    }

    /// Whether a back-fill whose read began at `readStart` (wall clock; `nil`:
    /// unknown) must be declined for `id`: a young tombstone is not older than it.
    /// With no tombstones' directory (its past unknown: see the note
    /// above), it is made and every back-fill begun before is declined.
    func forbid(_ id: EntryID, readStart: Int64?) -> Bool {
        guard let removed = latest(for: id) else {
            if FileIO.directoryExists(directory) { return false }
            make()
            return true
        }
        guard let readStart else { return true }
        return removed >= readStart
    }

    /// When the tombstone at `file` was made; `nil` when there is none.
    private func time(of file: String) -> Int64? {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var value: Int64 = 0
        if withUnsafeMutableBytes(of: &value, { read(fd, $0.baseAddress, 8) }) == 8 { return Int64(littleEndian: value) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return Self.wallNow() }  // cannot tell: as if made now
        return Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec) &+ Self.incompleteSlack
    }

    /// Deletes the tombstones that stop nothing (too old, or dated too far
    /// ahead: ``isLive(_:now:)``); returns how many.
    /// Each is read again under the exclusive delete lock, so one a remove
    /// has just made again stays.
    @discardableResult
    func sweep(entries: String) -> Int {
        let now = Self.wallNow()
        var removed = 0
        for name in FileIO.listDirectory(directory) {
            let file = directory + "/" + name
            guard let made = time(of: file), !Self.isLive(made, now: now) else { continue }
            FileIO.withDeleteLock(entries, exclusive: true) {
                if let made = time(of: file), !Self.isLive(made, now: now), unlink(file) == 0 { removed += 1 }
            }
        }
        return removed
    }
}
