import Foundation
@testable import StrataExplorer
import Synchronization
import Testing

/// Redis's report of a key is told apart by events, not by timing: the
/// explorer's own back-fill (after a miss) is an echo even when its report
/// comes before the back-fill's own event (under load it came first by tens
/// of milliseconds, and a 20 ms grace blamed another client), and each
/// back-fill accounts for one report.
///
/// Books whose back-fill is expected to come get long windows, so that a
/// loaded machine (the test's sleeps and awaits overshooting) cannot turn a
/// late back-fill into a missed one.
@Suite struct EchoBookTests {
    /// A book that waits long for back-fills.
    static func patientBook() -> EchoBook { EchoBook(window: .seconds(60), wait: .seconds(60)) }

    @Test func aReportOfAKeyThatNeverMissedIsAnotherClientsAtOnce() async {
        let book = Self.patientBook()
        let start = ContinuousClock.now
        #expect(await book.isEcho("k") == false)
        #expect(ContinuousClock.now - start < .seconds(30), "not held back for the wait")
    }

    @Test func aReportThatComesBeforeItsBackfillsEventIsStillAnEcho() async {
        let book = Self.patientBook()
        book.noteMiss("k")
        let report = Task { await book.isEcho("k") }
        // The back-fill's event comes well after the report.
        try? await Task.sleep(for: .milliseconds(150))
        book.noteBackfill("k")
        #expect(await report.value == true)
    }

    @Test func eachBackfillAccountsForOneReport() async {
        let book = EchoBook(window: .seconds(60), wait: .milliseconds(300))
        book.noteMiss("k")
        book.noteBackfill("k")
        #expect(await book.isEcho("k") == true)
        // Another client's write after the echo: its own report. (It waits
        // for a back-fill that does not come, then says so.)
        #expect(await book.isEcho("k") == false)
    }

    @Test func twoBackfillsAccountForTwoReports() async {
        let book = Self.patientBook()
        book.noteMiss("k")
        book.noteBackfill("k")
        book.noteBackfill("k")
        #expect(await book.isEcho("k") == true)
        #expect(await book.isEcho("k") == true)
    }

    @Test func aMissWhoseBackfillNeverComesIsAnotherClientsAfterTheWait() async {
        let book = EchoBook(window: .seconds(1), wait: .milliseconds(300))
        book.noteMiss("k")
        let start = ContinuousClock.now
        #expect(await book.isEcho("k") == false)
        #expect(ContinuousClock.now - start >= book.wait)
    }

    /// What ``EchoBook/judge(_:_:)`` said, in the order it said it.
    final class Verdicts: Sendable {
        private let list = Mutex<[(Int, Bool)]>([])
        func record(_ report: Int) -> @Sendable (Bool) -> Void {
            { echo in self.list.withLock { $0.append((report, echo)) } }
        }
        var all: [(Int, Bool)] { list.withLock { $0 } }

        /// Every verdict, once there are `count` (a poll with a deadline).
        func awaitAll(_ count: Int) async -> [(Int, Bool)] {
            let deadline = ContinuousClock.now + .seconds(10)
            while all.count < count && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
            return all
        }
    }

    /// The echo waits for its back-fill; another client's write reported
    /// after it must not take the back-fill's credit (with a task per report,
    /// the later one could: from a review).
    @Test func reportsOfAKeyAreJudgedInTheOrderRedisSentThem() async {
        let book = EchoBook(window: .seconds(60), wait: .seconds(5))
        let verdicts = Verdicts()
        book.noteMiss("k")
        book.judge("k", verdicts.record(1))
        book.judge("k", verdicts.record(2))
        try? await Task.sleep(for: .milliseconds(50))
        #expect(verdicts.all.isEmpty, "both wait: the first for its back-fill, the second for the first")
        book.noteBackfill("k")
        let said = await verdicts.awaitAll(2)
        #expect(said.map(\.0) == [1, 2] && said.map(\.1) == [true, false], "\(said)")
    }

    @Test func aKeyWaitingForItsBackfillHoldsBackNoOtherKey() async {
        let book = Self.patientBook()
        let verdicts = Verdicts()
        book.noteMiss("a")
        book.judge("a", verdicts.record(1))
        book.judge("b", verdicts.record(2))
        #expect(verdicts.all.map(\.0) == [2] && verdicts.all.first?.1 == false, "judged on the caller, at once")
        book.noteBackfill("a")
        #expect(await verdicts.awaitAll(2).last.map { $0.0 == 1 && $0.1 } == true)
    }
}
