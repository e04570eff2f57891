@testable import Strata
import Testing

/// Only the names the disk level writes are its entries: 32 lowercase hex
/// digits and `.entry`. A foreign file that `UInt64(_:radix:)` would also
/// accept (a leading `+`, upper-case digits) is not taken for one, so it is
/// never deleted as a corrupt entry (from a fuzz audit).
@Suite struct EntryFileNameTests {
    @Test func onlyTheLevelsOwnSpellingIsAnEntry() {
        let own = "0123456789abcdef0123456789abcdef.entry"
        #expect(EntryID(fileName: own)?.fileName == own)
        for foreign in ["+123456789abcdef0123456789abcdef.entry", "0123456789abcdef+123456789abcdef.entry",
                        "0123456789ABCDEF0123456789abcdef.entry", "-123456789abcdef0123456789abcdef.entry",
                        "0123456789abcdef0123456789abcde.entry", "0123456789abcdef0123456789abcdeg.entry"] {
            #expect(EntryID(fileName: foreign) == nil, "\(foreign) taken for an entry")
        }
    }
}
