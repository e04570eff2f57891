import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization

/// Where log lines go. While the screen is up nothing but the renderer may
/// write to the terminal, so the explorer points the router at its model and
/// log lines land in the event log; before and after, they go to stderr. A
/// log file (`--log-file`) receives every line either way.
public final class LogRouter: Sendable {
    /// The process-wide router the bootstrapped ``ExplorerLogHandler``s write to.
    public static let shared = LogRouter()

    struct State {
        var screen: ExplorerModel?
        var file: Int32?
    }

    private let state = Mutex(State())

    public init() {}

    /// Sends log lines to `model`'s event log (the screen is up) or, with
    /// `nil`, back to stderr.
    public func route(to model: ExplorerModel?) { state.withLock { $0.screen = model } }

    /// Appends every log line to `path` as well (created if missing).
    public func addLogFile(path: String) throws(LogFileError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LogFileError(path: path, reason: String(cString: strerror(errno))) }
        let previous = state.withLock { state -> Int32? in
            defer { state.file = fd }
            return state.file
        }
        if let previous { close(previous) }
    }

    /// One log line: to the event log or stderr, and to the log file.
    public func emit(level: Logger.Level, label: String, message: String) {
        let (screen, file) = state.withLock { ($0.screen, $0.file) }
        let line = "\(level) \(label): \(message)"
        if let file { Self.write(ExplorerModel.clockTime() + " " + line + "\n", to: file) }
        if let screen {
            screen.log(line, isError: level >= .warning)
        } else {
            Self.write("strata: " + line + "\n", to: 2)
        }
    }

    static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// A log file that could not be opened.
public struct LogFileError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot open log file \(path): \(reason)" }
}
