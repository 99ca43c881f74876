/// A rectangle of cells.
public struct Rect: Equatable, Sendable {
    public var x: Int, y: Int, width: Int, height: Int
}

/// Where things go on the screen: the breadcrumb bar on top, the status bar at the bottom, the class list
/// on the left of the first screen, the current table or object in the rest. The reducer uses the same
/// geometry to keep the cursor in view, so what it scrolls to is what is drawn.
public enum Layout {
    public static let maxColumnWidth = 40
    /// A header is shown whole up to this width, even when the values are narrower.
    public static let headerWidthShown = 24

    /// The area between the two bars.
    public static func content(_ size: Size) -> Rect {
        Rect(x: 0, y: 1, width: size.width, height: max(0, size.height - 2))
    }

    /// The class list's width (0 when it is not shown: only the first screen has it).
    public static func sidebarWidth(_ state: AppState) -> Int {
        guard state.stack.count <= 1 else { return 0 }
        let widest = state.classes.map { Canvas.width(of: $0.name) + 1 + ValueFormat.grouped($0.count).count }.max() ?? 10
        return min(max(widest + 2, 14), 32, state.size.width / 3)
    }

    /// The table's rectangle (header row included) on the current screen.
    public static func tableArea(_ state: AppState) -> Rect {
        let c = content(state.size)
        let sw = sidebarWidth(state)
        let x = sw == 0 ? 0 : sw + 1
        return Rect(x: x, y: c.y, width: max(0, c.width - x), height: c.height)
    }

    /// Rows of data a table shows (its area less the header row).
    public static func visibleRows(_ state: AppState) -> Int { max(1, tableArea(state).height - 1) }

    /// Columns that are always shown at the left: the index and the primary key.
    public static func frozenCount(_ columns: [Column]) -> Int {
        var n = 0
        for c in columns {
            if case .index = c.kind { n += 1; continue }
            if c.isPrimaryKey { n += 1; continue }
            break
        }
        return n
    }

    /// One column on screen: which, where, how wide (the last one may be cut by the edge).
    public struct PlacedColumn: Equatable {
        public var index: Int
        public var x: Int
        public var width: Int
    }

    /// Each shown column takes a space on each side and a `│` after it.
    public static let columnPadding = 3

    /// The columns shown from `left` on, frozen ones first, in `width` cells.
    public static func placeColumns(widths: [Int], frozen: Int, left: Int, width: Int) -> [PlacedColumn] {
        var out: [PlacedColumn] = []
        var x = 0
        let order = Array(0..<min(frozen, widths.count)) + Array(max(left, frozen)..<max(widths.count, max(left, frozen)))
        for i in order where i < widths.count {
            guard x < width else { break }
            let w = min(widths[i], width - x - 2)
            if w < 1 { break }
            out.append(PlacedColumn(index: i, x: x, width: w))
            x += widths[i] + columnPadding
        }
        return out
    }

    /// The width a column needs for a header and some cells, within the limits.
    public static func columnWidth(header: String, cells: [String]) -> Int {
        var values = 0
        for c in cells { values = max(values, Canvas.width(of: c, limit: maxColumnWidth)) }
        let h = Canvas.width(of: header, limit: maxColumnWidth)
        return min(max(values, min(h, headerWidthShown), 1), maxColumnWidth)
    }
}

extension Canvas {
    /// The cells of `s`, counting no further than `limit` (a 10,000-character string costs no more than a short one).
    public static func width(of s: String, limit: Int) -> Int {
        var w = 0
        for g in s {
            w += visible(g).width
            if w >= limit { return limit }
        }
        return w
    }
}
