/// A cache eviction policy under simulation: it sees each request once, in
/// trace order, and says whether it was a hit.
///
/// A policy is created for one trace and one capacity (see ``PolicyKind``)
/// and used from one thread. A miss admits the object if the policy wants it.
/// A new policy is another conformance plus an entry in ``PolicyKind/all``.
public protocol Policy: AnyObject {
    /// The name used by `--policies` and in reports.
    var name: String { get }

    /// Handles the next request of the trace: `key`, with object `size`
    /// (1 when the trace has no sizes). Returns whether it was a hit.
    func access(key: Int, size: Int) -> Bool
}
