// index_fixture_writer: writes `search-indexes.realm`, a small file with Realm Core's search index on a column
// of every indexable type, with the shapes the index has (tagged single keys, lists of duplicates longer than a
// B+tree leaf, sub-indexes, strings sharing more than 200 bytes, null beside 0 and "", non-ASCII bytes, keys
// beyond 32 bits), written by Realm Core v14.14.0 itself. A test instrument only.
//
//   index_fixture_writer OUTFILE
#include <realm/db.hpp>
#include <realm/group.hpp>
#include <realm/history.hpp>
#include <realm/table.hpp>
#include <realm/transaction.hpp>
#include <realm/list.hpp>
#include <cstdio>
#include <string>

using namespace realm;

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s OUTFILE\n", argv[0]);
        return 2;
    }
    std::string path = argv[1];
    DB::delete_files(path, nullptr, true);
    {
        auto hist = make_in_realm_history();
        DBOptions options(DBOptions::Durability::Full);
        DBRef db = DB::create(std::move(hist), path, options);
        auto wt = db->start_write();
        TableRef metadata = wt->get_or_add_table("metadata");
        ColKey version = metadata->add_column(type_Int, "version");
        metadata->create_object().set(version, int64_t(1));

        TableRef t = wt->add_table_with_primary_key("class_Indexed", type_String, "key", false);
        ColKey c_key = t->get_primary_key_column();
        ColKey c_int = t->add_column(type_Int, "int", true);
        ColKey c_many = t->add_column(type_Int, "many", false);
        ColKey c_bool = t->add_column(type_Bool, "bool", true);
        ColKey c_str = t->add_column(type_String, "string", true);
        ColKey c_plain = t->add_column(type_String, "plain", false);
        ColKey c_date = t->add_column(type_Timestamp, "date", true);
        ColKey c_oid = t->add_column(type_ObjectId, "objectId", true);
        ColKey c_uuid = t->add_column(type_UUID, "uuid", true);
        ColKey c_mixed = t->add_column(type_Mixed, "mixed", true);
        ColKey c_text = t->add_column(type_String, "text", true);
        ColKey c_tags = t->add_column_list(type_String, "tags", true);
        ColKey c_unindexed = t->add_column(type_Int, "unindexed", false);
        for (ColKey c : {c_int, c_many, c_bool, c_str, c_plain, c_date, c_oid, c_uuid, c_mixed, c_tags})
            t->add_search_index(c);
        t->add_fulltext_index(c_text);

        const int n = 2600;
        std::string long_prefix(230, 'p');
        for (int i = 0; i < n; ++i) {
            Obj o = t->create_object_with_primary_key(Mixed(StringData("k" + std::to_string(i))));
            // int: null, 0, negatives, beyond 32 bits, values sharing their low 4 bytes, duplicates.
            switch (i % 9) {
                case 0: o.set_null(c_int); break;
                case 1: o.set(c_int, int64_t(0)); break;
                case 2: o.set(c_int, int64_t(-i)); break;
                case 3: o.set(c_int, (int64_t(i) << 32) | 7); break;
                case 4: o.set(c_int, int64_t(7)); break;
                case 5: o.set(c_int, int64_t(i)); break;
                case 6: o.set(c_int, INT64_MIN + i); break;
                case 7: o.set(c_int, int64_t(i % 50)); break;
                default: o.set(c_int, int64_t(1) << 40); break;
            }
            o.set(c_many, int64_t(i % 2));  // 1,300 each: lists longer than one B+tree leaf
            if (i % 3 == 0) o.set_null(c_bool); else o.set(c_bool, i % 3 == 1);
            std::string s;
            switch (i % 13) {
                case 0: break;  // null
                case 1: s = ""; break;
                case 2: s = "a"; break;
                case 3: s = "ab"; break;
                case 4: s = "abX"; break;
                case 5: s = "abcd"; break;
                case 6: s = "abcde"; break;
                case 7: s = long_prefix + std::to_string(i % 5); break;   // 230 shared bytes: one list
                case 8: s = "Z\u00FCrich"; break;
                case 9: s = "\u6771\u4EAC-" + std::to_string(i % 11); break;
                case 10: s = "name-" + std::to_string(i); break;
                case 11: s = std::string("\xff\xfe") + std::to_string(i % 3); break;  // not UTF-8
                default: s = "dup"; break;
            }
            if (i % 13 == 0) o.set_null(c_str); else o.set(c_str, StringData(s));
            o.set(c_plain, StringData(i % 4 == 0 ? std::string() : "plain-" + std::to_string(i % 97)));
            if (i % 5 == 0) o.set_null(c_date);
            else o.set(c_date, Timestamp(int64_t(i % 40) * 86400 - 1000000, int32_t((i % 3) * 1000)));
            if (i % 6 == 0) o.set_null(c_oid);
            else {
                ObjectId::ObjectIdBytes b{};
                for (int k = 0; k < 12; ++k) b[k] = uint8_t((k * 31 + (i % 200)) & 0xff);
                o.set(c_oid, ObjectId(b));
            }
            if (i % 7 == 0) o.set_null(c_uuid);
            else {
                UUID::UUIDBytes b{};
                for (int k = 0; k < 16; ++k) b[k] = uint8_t((k * 17 + (i % 300) * 3) & 0xff);
                o.set(c_uuid, UUID(b));
            }
            o.set(c_mixed, i % 2 ? Mixed(int64_t(i % 10)) : Mixed(StringData("m" + std::to_string(i % 10))));
            o.set(c_text, StringData("word" + std::to_string(i % 20) + " other"));
            auto tags = o.get_list<String>(c_tags);
            tags.add(StringData("t" + std::to_string(i % 4)));
            o.set(c_unindexed, int64_t(i % 10));
        }
        wt->commit();

        // A second commit that changes and deletes, as an app would: values move between index entries.
        wt = db->start_write();
        t = wt->get_table("class_Indexed");
        for (int i = 0; i < n; i += 17) {
            Obj o = t->get_object_with_primary_key(Mixed(StringData("k" + std::to_string(i))));
            if (i % 2) o.remove();
            else {
                o.set(c_str, StringData("changed"));
                o.set(c_int, int64_t(7));
            }
        }
        wt->commit();
        wt = nullptr;
        db->compact();  // drop the free space of the two commits: a smaller fixture
    }
    DB::delete_files(path + ".tmp", nullptr, true);
    std::remove((path + ".lock").c_str());
    std::remove((path + ".note").c_str());
    std::remove((path + ".management").c_str());
    std::printf("wrote %s\n", path.c_str());
    return 0;
}
