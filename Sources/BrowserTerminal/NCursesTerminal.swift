import BrowserCore
import Foundation
internal import CNCursesw
internal import CTerminalGuard

/// The terminal cannot be used.
public struct TerminalError: Error, CustomStringConvertible {
    public let description: String
}

/// The browser's terminal on ncursesw: wide characters, colours from the theme (true colour, 256 or 8,
/// none with `NO_COLOR`, the terminal's own background kept), keys through `get_wch`, only changed cells
/// drawn, and the terminal restored on quit, on a crash and on a termination signal.
public final class NCursesTerminal: Terminal {
    private var screen: OpaquePointer?
    private var last: Canvas?
    private var styles: [Role: (attrs: attr_t, pair: Int32)] = [:]
    public private(set) var size: Size
    /// How colours are shown, for the status of `--theme` and tests.
    public private(set) var colorMode: ColorMode = .none

    public enum ColorMode: String, Sendable { case none, basic8 = "8 colours", indexed256 = "256 colours", direct = "true colour" }

    /// Takes over the terminal. Throws when standard input or output is not a terminal.
    public init(theme: Theme, noColor: Bool, mouse: Bool = true) throws {
        guard isatty(0) == 1, isatty(1) == 1 else {
            throw TerminalError(description: "the browser needs a terminal (standard input and output must be a TTY); "
                                + "for scripts, use a subcommand such as `realm-browser info FILE`")
        }
        setlocale(LC_ALL, "")
        _ = terminal_guard_save(1)
        guard let scr = newterm(nil, shim_stdout(), shim_stdin()) else {
            let term = ProcessInfo.processInfo.environment["TERM"] ?? "(unset)"
            throw TerminalError(description: "cannot start the terminal: TERM=\(term) is not known to terminfo")
        }
        screen = scr
        set_term(scr)
        terminal_guard_install()
        atexit {
            if !isendwin() { endwin() }
            terminal_guard_restore()
        }
        raw()
        noecho()
        nonl()
        keypad(shim_stdscr(), true)
        set_escdelay(25)
        curs_set(0)
        if mouse { _ = shim_mouse_on() }
        size = Size(width: Int(shim_COLS()), height: Int(shim_LINES()))
        setUpColors(theme: theme, noColor: noColor)
    }

    deinit { close() }

    /// Gives the terminal back as it was.
    public func close() {
        guard let scr = screen else { return }
        if !isendwin() { endwin() }
        delscreen(scr)
        screen = nil
        terminal_guard_uninstall()
    }

    // MARK: Colours

    private func setUpColors(theme: Theme, noColor: Bool) {
        var t = theme
        if noColor || !has_colors() || theme.monochrome {
            colorMode = .none
            t = theme.monochrome ? theme : theme.withoutColors()
        } else {
            start_color()
            let defaults = use_default_colors() == OK
            let colors = Int(shim_COLORS())
            colorMode = colors >= 1 << 24 ? .direct : colors >= 256 ? .indexed256 : .basic8
            for role in Role.allCases {
                let s = t.style(role)
                let fg = color(s.foreground, defaults: defaults, isBackground: false)
                let bg = color(s.background, defaults: defaults, isBackground: true)
                let pair = (fg == -1 && bg == -1) ? 0 : alloc_pair(fg, bg)
                styles[role] = (attributes(s), max(0, pair))
            }
            return
        }
        for role in Role.allCases { styles[role] = (attributes(t.style(role)), 0) }
    }

    private func color(_ c: Color, defaults: Bool, isBackground: Bool) -> Int32 {
        let n: Int
        switch colorMode {
        case .direct:
            if case .rgb(let r, let g, let b) = c { n = Int(r) << 16 | Int(g) << 8 | Int(b) } else { n = c.xterm256 }
        case .indexed256: n = c.xterm256
        default: n = c.basic8
        }
        if n < 0 && !defaults { return isBackground ? 0 : 7 }
        return Int32(n)
    }

    private func attributes(_ s: Style) -> attr_t {
        var a = shim_A_NORMAL()
        if s.bold { a |= shim_A_BOLD() }
        if s.dim { a |= shim_A_DIM() }
        if s.italic { a |= shim_A_ITALIC() }
        if s.underline { a |= shim_A_UNDERLINE() }
        if s.reverse { a |= shim_A_REVERSE() }
        return a
    }

    // MARK: Drawing

    public func present(_ canvas: Canvas) {
        guard canvas.size == size else { return }
        if last == nil || last!.size != canvas.size { werase(shim_stdscr()) }
        for run in canvas.runs(since: last) {
            let st = styles[run.role] ?? (shim_A_NORMAL(), 0)
            _ = shim_attr_set_pair(st.attrs, st.pair)
            // Draw each stretch from an explicit position, starting again after any cluster of several
            // scalars (ncurses measures per code point and could disagree with our width).
            var x = run.x
            var i = 0
            var segment: [wchar_t] = []
            var segmentX = x
            func flush() {
                guard !segment.isEmpty else { return }
                segment.append(0)
                _ = segment.withUnsafeBufferPointer { mvaddwstr(Int32(run.y), Int32(segmentX), $0.baseAddress) }
                segment.removeAll(keepingCapacity: true)
            }
            while i < run.cells.count {
                let cell = run.cells[i]
                if cell.isContinuation { i += 1; x += 1; continue }
                let wide = i + 1 < run.cells.count && run.cells[i + 1].isContinuation
                let scalars = cell.character.unicodeScalars
                if segment.isEmpty { segmentX = x }
                for u in scalars { segment.append(wchar_t(bitPattern: u.value)) }
                if scalars.count > 1 || wide { flush() }
                x += wide ? 2 : 1
                i += wide ? 2 : 1
            }
            flush()
        }
        _ = shim_attr_set_pair(shim_A_NORMAL(), 0)
        refresh()
        last = canvas
    }

    public func invalidate() {
        last = nil
        clearok(shim_stdscr(), true)
    }

    // MARK: Input

    public private(set) var isDisconnected = false
    /// Reads that failed at once although they were given time: a terminal that is gone fails every read
    /// immediately (end of file), where a live one waits for the timeout.
    private var immediateFailures = 0

    public func nextEvent(timeoutMilliseconds: Int) -> TerminalEvent? {
        wtimeout(shim_stdscr(), Int32(timeoutMilliseconds))
        var wch: wint_t = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let r = wget_wch(shim_stdscr(), &wch)
        if r == ERR {
            let elapsedMs = (DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
            if timeoutMilliseconds >= 50 && elapsedMs < UInt64(timeoutMilliseconds / 4) {
                immediateFailures += 1
                if immediateFailures >= 20 { isDisconnected = true }
            } else {
                immediateFailures = 0
            }
            return nil
        }
        immediateFailures = 0
        if r == shim_KEY_CODE_YES() {
            let code = Int32(wch)
            if code == KEY_RESIZE {
                size = Size(width: Int(shim_COLS()), height: Int(shim_LINES()))
                last = nil
                return .resize(size)
            }
            if code == KEY_MOUSE {
                var x: Int32 = 0, y: Int32 = 0
                switch shim_get_mouse(&x, &y) {
                case 1: return .mouse(.click(x: Int(x), y: Int(y)))
                case 4: return .mouse(.wheelUp(x: Int(x), y: Int(y)))
                case 5: return .mouse(.wheelDown(x: Int(x), y: Int(y)))
                default: return nil
                }
            }
            return NCursesTerminal.key(code).map { .key($0) }
        }
        switch wch {
        case 13, 10: return .key(.enter)
        case 9: return .key(.tab)
        case 27: return .key(.escape)
        case 127, 8: return .key(.backspace)
        case 0: return .key(.ctrl(" "))
        case 1...26: return .key(.ctrl(Character(Unicode.Scalar(UInt8(wch) + 0x60))))
        default:
            guard let u = Unicode.Scalar(wch), wch >= 32 else { return nil }
            return .key(.char(Character(u)))
        }
    }

    /// A curses function-key code as a key.
    static func key(_ code: Int32) -> Key? {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_NPAGE: return .pageDown
        case KEY_PPAGE: return .pageUp
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_BACKSPACE: return .backspace
        case KEY_DC: return .delete
        case KEY_IC: return .insert
        case KEY_BTAB: return .backTab
        case KEY_ENTER: return .enter
        case (KEY_F0 + 1)...(KEY_F0 + 12): return .function(Int(code - KEY_F0))
        default: return nil
        }
    }
}
