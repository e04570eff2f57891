import Foundation
@testable import StrataExplorer
import Testing

/// Redis's report of a key is told apart by events, not by timing: the
/// explorer's own back-fill (after a miss) is an echo even when its report
/// comes before the back-fill's own event (under load it came first by tens
/// of milliseconds, and a 20 ms grace blamed another client), and each
/// back-fill accounts for one report.
@Suite struct EchoBookTests {
    @Test func aReportOfAKeyThatNeverMissedIsAnotherClientsAtOnce() async {
        let book = EchoBook()
        let start = ContinuousClock.now
        #expect(await book.isEcho("k") == false)
        #expect(ContinuousClock.now - start < .milliseconds(500), "not held back")
    }

    @Test func aReportThatComesBeforeItsBackfillsEventIsStillAnEcho() async {
        let book = EchoBook()
        book.noteMiss("k")
        let report = Task { await book.isEcho("k") }
        // The back-fill's event comes well after the report.
        try? await Task.sleep(for: .milliseconds(150))
        book.noteBackfill("k")
        #expect(await report.value == true)
    }

    @Test func eachBackfillAccountsForOneReport() async {
        let book = EchoBook()
        book.noteMiss("k")
        book.noteBackfill("k")
        #expect(await book.isEcho("k") == true)
        // Another client's write after the echo: its own report. (It waits
        // for a back-fill that does not come, then says so.)
        #expect(await book.isEcho("k") == false)
    }

    @Test func twoBackfillsAccountForTwoReports() async {
        let book = EchoBook()
        book.noteMiss("k")
        book.noteBackfill("k")
        book.noteBackfill("k")
        #expect(await book.isEcho("k") == true)
        #expect(await book.isEcho("k") == true)
    }

    @Test func aMissWhoseBackfillNeverComesIsAnotherClientsAfterTheWait() async {
        let book = EchoBook()
        book.noteMiss("k")
        let start = ContinuousClock.now
        #expect(await book.isEcho("k") == false)
        #expect(ContinuousClock.now - start >= EchoBook.wait)
    }
}
