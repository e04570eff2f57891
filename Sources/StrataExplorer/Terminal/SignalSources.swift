import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Dispatch sources for process signals that are in place when `make`
/// returns, with no moment in which a signal is lost.
///
/// libdispatch on Linux installs its own `sigaction` handler for a signal
/// when the source is registered, which its manager thread does a moment
/// after `resume()`. Until then the signal keeps its disposition. The Darwin
/// habit of ignoring the signal first (`SIG_IGN`) is wrong here: a signal
/// that arrives in that moment is discarded, and a process then waiting on
/// its input waits for ever (that hung a CI run: `strata run` killed with
/// SIGINT just after start). Left at its default, such a signal ends the
/// process at once; and `make` waits (bounded) until libdispatch's handler
/// is installed for every signal, so from its return on they reach `handler`.
public enum SignalSources {
    /// Sources for `signals` whose events run `handler(signal)` on `queue`,
    /// resumed and armed. Keep them (cancel them to stop listening).
    public static func make(_ signals: [Int32], queue: DispatchQueue,
                            handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        let sources = signals.map { number -> any DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
        waitUntilCaught(signals)
        return sources
    }

    /// Whether a handler (not the default action, not "ignore") is installed
    /// for signal `number` in this process.
    public static func isCaught(_ number: Int32) -> Bool {
        var action = sigaction()
        guard sigaction(number, nil, &action) == 0 else { return false }
        let handler = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
        return handler != 0 && handler != 1  // SIG_DFL, SIG_IGN
    }

    /// Returns once every signal in `signals` is caught, or after `limit`
    /// (registration is libdispatch's; no event tells when it is done).
    static func waitUntilCaught(_ signals: [Int32], limit: Duration = .seconds(2)) {
        let deadline = ContinuousClock.now + limit
        while !signals.allSatisfy(isCaught), ContinuousClock.now < deadline {
            usleep(100)
        }
    }
}
