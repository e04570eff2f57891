import Foundation
import StrataSim
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writes the requests the explorer makes to a strata trace file
/// (``RecordedTrace``) for `record FILE`.
///
/// ``record(_:)`` only appends a line to a buffer under a lock, so neither
/// the refresh loop nor a workload ever waits for the disk: the buffer is
/// written from a queue of its own every quarter second, sooner once it
/// holds 64 KiB, and on ``stop()``. A write that fails (a full disk), a file
/// that is no longer at its path (deleted, or its directory), or a buffer
/// the disk cannot keep up with (over 64 MiB) ends the recording: the file is
/// closed and `onFailure` gets one line saying why.
final class TraceRecorder: Sendable {
    /// The file as the user named it.
    let path: String
    private let fd: Int32
    private let started = ContinuousClock.now
    private let queue = DispatchQueue(label: "strata.record")
    /// The quarter-second flush (a Dispatch source is not `Sendable`; the mutex makes it so).
    private let timer: Mutex<any DispatchSourceTimer>
    private let onFailure: @Sendable (String) -> Void

    private struct Buffer {
        var bytes: [UInt8] = []
        var requests = 0
        var flushQueued = false
        /// Why the recording ended early, once it has.
        var failure: String?
        var closed = false
    }

    private let buffer = Mutex(Buffer())

    /// Buffered bytes that start a write before the next timer tick.
    static let flushThreshold = 64 << 10
    /// Buffered bytes that end the recording: the disk is not keeping up.
    static let maxBuffered = 64 << 20

    /// Why a recording could not start.
    struct CannotRecord: Error, CustomStringConvertible {
        let description: String
    }

    /// Creates (or truncates) `path` and starts a recording; the header is
    /// written with the first buffer. A directory, FIFO or socket is refused
    /// (a FIFO would hold the writer for ever); a device such as `/dev/null` is not.
    init(path: String, onFailure: @escaping @Sendable (String) -> Void) throws(CannotRecord) {
        var info = stat()
        if stat(path, &info) == 0 {
            let kind = info.st_mode & S_IFMT
            if kind == S_IFDIR { throw CannotRecord(description: "cannot record to \(path): it is a directory") }
            if kind == S_IFIFO || kind == S_IFSOCK {
                throw CannotRecord(description: "cannot record to \(path): not a regular file (it is a \(kind == S_IFIFO ? "FIFO" : "socket"))")
            }
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0o644)
        guard fd >= 0 else { throw CannotRecord(description: "cannot record to \(path): \(String(cString: strerror(errno)))") }
        self.path = path
        self.fd = fd
        self.onFailure = onFailure
        timer = Mutex(DispatchSource.makeTimerSource(queue: queue))
        buffer.withLock { $0.bytes = Array((RecordedTrace.header + "\n").utf8) }
        timer.withLock { timer in
            timer.schedule(deadline: .now() + .milliseconds(250), repeating: .milliseconds(250))
            timer.setEventHandler { [weak self] in self?.flush() }
            timer.resume()
        }
    }

    /// Requests recorded so far.
    var requests: Int { buffer.withLock { $0.requests } }

    /// Appends one request, stamped with the time since the recording began.
    func record(_ operation: RecordedRequest.Operation) {
        let queueFlush = buffer.withLock { buffer -> Bool in
            guard !buffer.closed else { return false }
            // Stamped under the lock, so offsets never go back.
            let elapsed = ContinuousClock.now - started
            let micros = Int(elapsed.components.seconds) * 1_000_000 + Int(elapsed.components.attoseconds / 1_000_000_000_000)
            buffer.bytes.append(contentsOf: RecordedTrace.line(RecordedRequest(offsetMicroseconds: micros, operation)).utf8)
            buffer.bytes.append(UInt8(ascii: "\n"))
            buffer.requests += 1
            guard buffer.bytes.count >= Self.flushThreshold, !buffer.flushQueued else { return false }
            buffer.flushQueued = true
            return true
        }
        if queueFlush { queue.async { [weak self] in self?.flush() } }
    }

    /// Writes what is buffered and closes the file; returns the requests
    /// recorded and, if the recording ended early, why.
    func stop() async -> (requests: Int, failure: String?) {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.flush()
                self.close(failure: nil)
                continuation.resume()
            }
        }
        return buffer.withLock { ($0.requests, $0.failure) }
    }

    /// On the queue: writes the buffer out, or ends the recording.
    private func flush() {
        let (bytes, closed) = buffer.withLock { buffer -> ([UInt8], Bool) in
            buffer.flushQueued = false
            defer { buffer.bytes = [] }
            return (buffer.bytes, buffer.closed)
        }
        guard !closed else { return }
        if bytes.count > Self.maxBuffered {
            return end("the disk did not keep up (more than \(Self.maxBuffered >> 20) MiB waiting)")
        }
        if let moved = fileMoved() { return end(moved) }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return end(String(cString: strerror(errno)))
            }
            written += n
        }
    }

    /// Why `path` no longer names the open file (deleted, its directory
    /// deleted, or replaced), or nil while it does.
    private func fileMoved() -> String? {
        var open = stat(), named = stat()
        guard fstat(fd, &open) == 0 else { return nil }
        // A device (/dev/null) has no directory entry to lose.
        if (open.st_mode & S_IFMT) != S_IFREG { return nil }
        guard stat(path, &named) == 0 else { return "the file was deleted (or its directory)" }
        return named.st_ino == open.st_ino && named.st_dev == open.st_dev ? nil : "the file was replaced by another"
    }

    /// On the queue: ends the recording early, once, and says why.
    private func end(_ reason: String) {
        let requests = buffer.withLock { $0.requests }
        close(failure: reason)
        onFailure("recording to \(path) ended after \(requests) requests: \(reason)")
    }

    private func close(failure: String?) {
        let wasOpen = buffer.withLock { buffer -> Bool in
            guard !buffer.closed else { return false }
            buffer.closed = true
            buffer.failure = failure
            buffer.bytes = []
            return true
        }
        guard wasOpen else { return }
        timer.withLock { $0.cancel() }
        Glibc.close(fd)
    }

    deinit {
        // A recorder dropped without stop() (it should not be) still closes its file.
        if !buffer.withLock({ $0.closed }) {
            timer.withLock { $0.cancel() }
            Glibc.close(fd)
        }
    }
}
