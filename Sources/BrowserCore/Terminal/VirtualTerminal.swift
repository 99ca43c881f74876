/// A terminal in memory: applies the runs that `present` would send to a real terminal to a grid of cells,
/// so tests see exactly what a person would, as text. Input comes from a queue of events.
public final class VirtualTerminal: Terminal {
    public private(set) var size: Size
    /// What is on the screen.
    public private(set) var screen: Canvas
    private var lastPresented: Canvas?
    /// Events `nextEvent` hands out, first to last.
    public var input: [TerminalEvent] = []
    /// Cells written by the last `present` (to check that drawing is diffed).
    public private(set) var cellsWrittenLastTime = 0

    public init(size: Size) {
        self.size = size
        screen = Canvas(size: size)
    }

    public func present(_ canvas: Canvas) {
        precondition(canvas.size == size, "presented a \(canvas.size) canvas on a \(size) terminal")
        let runs = canvas.runs(since: lastPresented)
        cellsWrittenLastTime = runs.reduce(0) { $0 + $1.cells.count }
        var grid = screen
        for run in runs {
            grid.apply(run)
        }
        screen = grid
        lastPresented = canvas
    }

    public func nextEvent(timeoutMilliseconds: Int) -> TerminalEvent? {
        input.isEmpty ? nil : input.removeFirst()
    }

    public func invalidate() { lastPresented = nil }

    /// Changes the size, as a window resize does, and queues the resize event.
    public func resize(to newSize: Size) {
        size = newSize
        screen = Canvas(size: newSize)
        lastPresented = nil
        input.append(.resize(newSize))
    }

    /// Queues keys typed as terminal bytes (`"jj\r"`, `"\u{1B}[B"` for ↓).
    public func type(_ bytes: String) {
        input += KeyDecoder.keys(bytes).map { .key($0) }
    }

    /// Queues a mouse event (tests).
    public func mouse(_ m: MouseEvent) { input.append(.mouse(m)) }

    /// The screen as text, one line per row.
    public var text: String { screen.text }
}

extension Canvas {
    /// Copies a run onto this canvas at its place.
    mutating func apply(_ run: CanvasRun) {
        var x = run.x
        var i = 0
        while i < run.cells.count {
            let c = run.cells[i]
            if c.isContinuation { i += 1; x += 1; continue }
            let w = i + 1 < run.cells.count && run.cells[i + 1].isContinuation ? 2 : 1
            draw(String(c.character), x: x, y: run.y, maxWidth: w, role: c.role)
            x += w
            i += w
        }
    }
}
