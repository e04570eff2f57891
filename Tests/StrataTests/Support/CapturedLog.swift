import Logging
import Synchronization

/// The lines logged at `.warning` or above, once bootstrapped: for the child
/// process of an exit test (a process bootstraps logging once, and the test
/// runner's own process must not be changed).
final class CapturedLog: Sendable {
    /// One logged line: its logger's label and its text with its metadata.
    struct Line: Sendable {
        let label: String
        let text: String
    }

    private let captured = Mutex<[Line]>([])

    /// Every line logged so far.
    var lines: [Line] { captured.withLock { $0 } }

    /// Routes every logger of this process here. Call once, first.
    static func bootstrap() -> CapturedLog {
        let log = CapturedLog()
        LoggingSystem.bootstrap { Handler(label: $0, log: log) }
        return log
    }

    struct Handler: LogHandler {
        let label: String
        let log: CapturedLog
        var logLevel: Logger.Level = .warning
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let text = ([event.message.description] + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
                .joined(separator: " ")
            log.captured.withLock { $0.append(Line(label: label, text: text)) }
        }
    }
}
