import Logging
@testable import Strata
import Synchronization
import Testing

/// One warning per request during an outage would flood the log: the first
/// is logged, then one per interval saying how many were left out.
@Suite struct RateLimitedWarningTests {
    @Test func theFirstIsLoggedThenOnePerIntervalWithACount() {
        let lines = Mutex<[Logger.Metadata]>([])
        let warning = RateLimitedWarning(interval: .seconds(10)) { metadata in lines.withLock { $0.append(metadata) } }
        let start = ContinuousClock.now
        for i in 0..<100 { warning.warn(["n": "\(i)"], now: start + .milliseconds(i * 50)) }  // 5 s of failures
        #expect(lines.withLock { $0.count } == 1)
        #expect(lines.withLock { $0[0]["suppressed"] } == nil)
        warning.warn(["n": "late"], now: start + .seconds(11))
        let logged = lines.withLock { $0 }
        #expect(logged.count == 2)
        #expect(logged[1]["suppressed"] == "99" && logged[1]["n"] == "late")
        warning.warn(["n": "later"], now: start + .seconds(30))
        #expect(lines.withLock { $0.count == 3 && $0[2]["suppressed"] == nil })
    }
}
