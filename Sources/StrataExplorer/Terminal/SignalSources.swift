import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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
/// SIGINT just after start). Left as it was, such a signal ends the process
/// (or runs whatever handler was there, such as ncurses'); and `make` waits
/// (bounded) until libdispatch's handler has replaced it for every signal,
/// so from its return on they reach `handler`. On Darwin, kqueue sees
/// signals whatever their disposition: there they are ignored first, as
/// documented.
public enum SignalSources {
    /// Sources for `signals` whose events run `handler(signal)` on `queue`,
    /// resumed and armed. Keep them (cancel them to stop listening).
    public static func make(_ signals: [Int32], queue: DispatchQueue,
                            handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        #if os(Linux)
        let before = signals.map(installedHandler)
        #endif
        let sources = signals.map { number -> any DispatchSourceSignal in
            #if !os(Linux)
            signal(number, SIG_IGN)
            #endif
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
        #if os(Linux)
        waitUntilReplaced(signals, before: before)
        #endif
        return sources
    }

    #if os(Linux)
    /// The address of signal `number`'s handler in this process (0 the
    /// default action, 1 ignored, -1 unknown).
    static func installedHandler(_ number: Int32) -> Int {
        var action = sigaction()
        guard sigaction(number, nil, &action) == 0 else { return -1 }
        return unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
    }

    /// Returns once each signal's handler is neither `before`'s (whatever
    /// was there: the default, "ignore", or ncurses' handler) nor the default
    /// or "ignore", or after `limit` (registration is libdispatch's; no event
    /// tells when it is done).
    static func waitUntilReplaced(_ signals: [Int32], before: [Int], limit: Duration = .seconds(2)) {
        let deadline = ContinuousClock.now + limit
        func replaced() -> Bool {
            zip(signals, before).allSatisfy { number, old in
                let now = installedHandler(number)
                return now != old && now != 0 && now != 1
            }
        }
        while !replaced(), ContinuousClock.now < deadline { usleep(100) }
    }
    #endif
}
