/// Where the browser draws and where its keys come from: ncurses (`BrowserTerminal`) or, in tests, a
/// `VirtualTerminal` that keeps the screen as text.
public protocol Terminal: AnyObject {
    /// The current size in cells.
    var size: Size { get }
    /// Shows a canvas of the terminal's size, drawing only what differs from the last one shown.
    func present(_ canvas: Canvas)
    /// The next key or resize, waiting at most `timeoutMilliseconds` (nil: none came in time).
    func nextEvent(timeoutMilliseconds: Int) -> TerminalEvent?
    /// Forgets what is on the screen, so the next `present` draws everything (after a resize or Ctrl-L).
    func invalidate()
    /// True once the terminal is gone (its window closed without a hangup signal reaching us): the
    /// browser then stops instead of polling a dead input.
    var isDisconnected: Bool { get }
}

extension Terminal {
    public var isDisconnected: Bool { false }
}

/// A run of cells of one row that changed: where it starts and the cells, wide characters whole.
public struct CanvasRun: Equatable, Sendable {
    public var x: Int
    public var y: Int
    public var cells: [Cell]
}

extension Canvas {
    /// The runs of cells that differ from `old` (everything when `old` is nil or another size), split where
    /// the role changes, never starting on the right half of a wide character.
    public func runs(since old: Canvas?) -> [CanvasRun] {
        var out: [CanvasRun] = []
        let full = old == nil || old!.size != size
        for y in 0..<height {
            var x = 0
            while x < width {
                if !full && old![x, y] == self[x, y] { x += 1; continue }
                // A changed cell: start the run at the beginning of its character.
                var start = x
                if self[start, y].isContinuation && start > 0 { start -= 1 }
                var end = x
                while end < width && (full || old![end, y] != self[end, y] || self[end, y].isContinuation) { end += 1 }
                // Split by role.
                var runStart = start
                while runStart < end {
                    let role = self[runStart, y].role
                    var runEnd = runStart + 1
                    while runEnd < end && (self[runEnd, y].role == role || self[runEnd, y].isContinuation) { runEnd += 1 }
                    out.append(CanvasRun(x: runStart, y: y, cells: (runStart..<runEnd).map { self[$0, y] }))
                    runStart = runEnd
                }
                x = end
            }
        }
        return out
    }
}

extension CanvasRun {
    /// The run's text: one entry per drawn character (continuations skipped).
    public var text: String {
        var s = ""
        for c in cells where !c.isContinuation { s.append(c.character) }
        return s
    }
    public var role: Role { cells.first?.role ?? .normal }
}
