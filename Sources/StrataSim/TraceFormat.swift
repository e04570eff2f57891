/// How a trace file's lines are read.
public enum TraceFormat: String, Sendable, CaseIterable {
    /// Decided by the first request line: the header `#strata-trace` means
    /// ``strata``, a comma ``csv``, an integer ``lirs``, anything else ``keys``.
    case auto
    /// The LIRS format of Caffeine's simulator: one integer key per line;
    /// blank lines and `*` lines are skipped.
    case lirs
    /// One key per line, any text (surrounding spaces trimmed); blank lines skipped.
    /// Keys are told apart by their bytes, not by Unicode equivalence.
    case keys
    /// `key[,size]` per line, no quoting. With sizes, every line has one and
    /// capacities are in bytes. A first line whose size field is not blank and
    /// does not start with a digit or sign (`key,size`) is a header and is
    /// skipped; any other bad size is a malformed line.
    case csv
    /// The strata trace format (``RecordedTrace``): what the explorer's
    /// `:record` writes. Every get and set is a request for its key; removes
    /// and clears are not replayed (the policies model no removal).
    case strata
}
