// `realm-bench --browser`: how fast the terminal browser shows a big file — the first screen, a page down,
// a jump to the end, and with `--file` a demo database (`realm-browser demo`), an object with a
// 10,000-character string and a 1 MiB blob — drawn on a virtual terminal of 200×50 cells, so the
// terminal itself is not timed. See docs/DECISIONS.md, 21.

import BrowserCore
import Foundation
import RealmStorage
import RealmTools

enum BrowserBench {
    static func run(options: Options, directory: String) throws {
        let clock = ContinuousClock()
        let path: String
        if let file = options.browserFile {
            path = file
            Output.line("browser: \(file)")
        } else {
            // One class of --objects objects: the table the issue asks to open instantly.
            path = directory + "/items.realm"
            let start = clock.now
            let db = try Database.open(path: path)
            try db.write { tx in
                try tx.createClass(ClassSchema(name: "Item", properties: [
                    PropertySchema(name: "id", type: .int, isPrimaryKey: true),
                    PropertySchema(name: "name", type: .string, isIndexed: true),
                    PropertySchema(name: "price", type: .double),
                    PropertySchema(name: "added", type: .date),
                    PropertySchema(name: "inStock", type: .bool),
                    PropertySchema(name: "note", type: .string, isOptional: true),
                ]))
                let t = try tx.table("Item")
                let columns = try ["id", "name", "price", "added", "inStock", "note"].map { try tx.property(t, $0) }
                for i in 0..<options.objects {
                    _ = try tx.createObject(t, columns: columns, values: [
                        .int(Int64(i)), .string("item \(i) 品物"), .double(Double(i % 10_000) / 100),
                        .date(Timestamp(seconds: 1_600_000_000 + Int64(i))), .bool(i % 3 == 0),
                        i % 5 == 0 ? .null : .string("note \(i % 977)"),
                    ])
                }
            }
            Output.line("browser: \(ValueFormat.grouped(options.objects)) Item objects written in \(Format.ms(Timing.milliseconds(clock.now - start))) ms")
        }
        let size = Size(width: 200, height: 50)

        func time(_ label: String, repeats: Int = options.repeats, _ body: () throws -> Void) rethrows {
            var samples: [Double] = []
            for _ in 0..<repeats {
                let start = clock.now
                try body()
                samples.append(Timing.milliseconds(clock.now - start))
            }
            samples.sort()
            Output.line("  \(label.padding(toLength: 52, withPad: " ", startingAt: 0)) \(Format.ms(samples[samples.count / 2])) ms (median of \(repeats))")
        }

        // Opening: the file, the first snapshot, the class list with counts, the first table drawn.
        try time("open the file and draw the first screen") {
            let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
            let terminal = VirtualTerminal(size: size)
            let app = BrowserApp(terminal: terminal, data: try BrowserData(database: db))
            app.draw()
        }

        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        let terminal = VirtualTerminal(size: size)
        let app = BrowserApp(terminal: terminal, data: try BrowserData(database: db))
        // Queries and sorts run on a worker: wait for each to end, so the times below are whole.
        app.quickJobMilliseconds = Int(Int32.max)
        app.draw()
        // The biggest class.
        let biggest = app.state.classes.indices.max { app.state.classes[$0].count < app.state.classes[$1].count } ?? 0
        Output.line("  biggest class: \(app.state.classes[biggest].name), \(ValueFormat.grouped(app.state.classes[biggest].count)) objects")
        terminal.type("\t" + String(repeating: "j", count: biggest) + "\t")
        app.processPendingInput()

        time("page down (PgDn), drawn", repeats: 200) {
            terminal.type("\u{1B}[6~")
            app.processPendingInput()
        }
        time("jump to the last row (G), drawn", repeats: 20) {
            terminal.type("G")
            app.processPendingInput()
            terminal.type("gg")
            app.processPendingInput()
        }
        time("move down one row (j), drawn", repeats: 200) {
            terminal.type("j")
            app.processPendingInput()
        }
        time("open an object (Enter) and go back (Esc)", repeats: 50) {
            terminal.type("\r")
            app.processPendingInput()
            terminal.type("\u{1B}")
            app.processPendingInput()
        }
        // The query bar and the column sort, on the biggest class: evaluated by the engine over every object,
        // then the first screen of the result drawn. Each run clears the previous one first.
        let isItems = app.state.classes[biggest].name == "Item"
        let queries = isItems
            ? ["price < 10", "name CONTAINS[c] '99 品'", "inStock == true AND price BETWEEN {5, 6}", "note == nil"]
            : ["TRUEPREDICATE LIMIT(10)"]
        for q in queries {
            time("query `\(q)`, drawn", repeats: 5) {
                terminal.type("/\u{15}" + q + "\r")
                app.processPendingInput()
            }
            Output.line("    \(app.state.message?.text ?? "")")
        }
        terminal.type("/\u{15}\r0")
        app.processPendingInput()
        if isItems {
            for (column, name) in [(2, "price (double)"), (1, "name (string)")] {
                time("sort all by \(name) ascending ([), drawn", repeats: 3) {
                    terminal.type("0" + String(repeating: "l", count: column) + "[")
                    app.processPendingInput()
                    terminal.type("[")   // again: unsorted
                    app.processPendingInput()
                }
            }
        }

        // AllTypes #1 holds the 10,000-character string, #5 the 1 MiB blob.
        if let all = app.state.classes.firstIndex(where: { $0.name == "AllTypes" }) {
            terminal.type("gg\t" + (all > biggest ? String(repeating: "j", count: all - biggest) : String(repeating: "k", count: biggest - all)) + "\t")
            app.processPendingInput()
            for (row, what) in [(1, "a 10,000-character string"), (5, "a 1 MiB blob")] {
                time("object view with \(what), drawn", repeats: 20) {
                    terminal.type("gg" + String(repeating: "j", count: row) + "\r")
                    app.processPendingInput()
                    terminal.type("\u{1B}")
                    app.processPendingInput()
                }
            }
        }
        time("check for a newer version (idle poll)", repeats: 1000) {
            _ = app.checkForChanges()
        }
    }
}
