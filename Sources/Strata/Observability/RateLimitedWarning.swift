import Logging
import Synchronization

/// A warning that can come once per request during an outage (a back-fill
/// into a Redis that is down): logged at once the first time, then at most
/// once per `interval`, saying how many were left out since (`suppressed`).
package final class RateLimitedWarning: Sendable {
    private struct State {
        var lastLogged: ContinuousClock.Instant?
        var suppressed = 0
        var logged = 0
    }

    private let state = Mutex(State())
    private let interval: Duration
    private let emit: @Sendable (Logger.Metadata) -> Void

    package init(_ logger: Logger, _ message: Logger.Message, interval: Duration = .seconds(10)) {
        self.interval = interval
        emit = { logger.warning(message, metadata: $0) }
    }

    /// For tests: `emit` receives what would be logged.
    init(interval: Duration, emit: @escaping @Sendable (Logger.Metadata) -> Void) {
        self.interval = interval
        self.emit = emit
    }

    /// Lines logged so far (tests).
    package var logged: Int { state.withLock { $0.logged } }

    package func warn(_ metadata: @autoclosure () -> Logger.Metadata, now: ContinuousClock.Instant = .now) {
        let suppressed = state.withLock { state -> Int? in
            if let last = state.lastLogged, now - last < interval {
                state.suppressed += 1
                return nil
            }
            defer { state.lastLogged = now; state.suppressed = 0; state.logged += 1 }
            return state.suppressed
        }
        guard let suppressed else { return }
        var metadata = metadata()
        if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
        emit(metadata)
    }
}
