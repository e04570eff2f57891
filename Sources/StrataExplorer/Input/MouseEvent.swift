/// A mouse event from the terminal (off with `--no-mouse`): a press to focus
/// the pane under it, the wheel to scroll the event log.
public struct MouseEvent: Equatable, Sendable {
    public enum Kind: Equatable, Sendable { case press, wheelUp, wheelDown }
    public var kind: Kind
    public var x: Int
    public var y: Int

    public init(_ kind: Kind, x: Int, y: Int) {
        self.kind = kind
        self.x = x
        self.y = y
    }

    /// Events a wheel step scrolls the log by.
    public static let wheelStep = 3
}
