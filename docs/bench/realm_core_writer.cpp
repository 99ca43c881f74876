// realm_core_writer: writes Realm files with Realm Core's own C++ API, shaped as an SDK writes them, so the
// project's Realm Core reader (RealmCoreFile: `realm-browser info/query/export/convert`) can be measured on
// files Realm Core wrote itself. A measuring instrument only: nothing of Realm Core goes into the product.
//
//   realm_core_writer OUTDIR [N] [--no-encrypted]
//
// N defaults to 1,000,000. Writes into OUTDIR (replacing files of the same names):
//   people-<L>.realm            class_Person: id (int, primary key), name (string, indexed), city (string),
//                               age (int), score (double), active (bool): N objects, the same values as
//                               realm-bench's insert workload (Sources/realm-bench/BenchTarget.swift);
//                               class_Dog: name (string), owner (link to Person): N/4 dogs, dog i named
//                               "dog-i" and owned by the person whose id is (i * 7919) % N (as realm-bench);
//                               a `metadata` table holding the schema version (1), as the object store keeps it.
//   people-<L>-encrypted.realm  the same, encrypted with a 64-byte key (unless --no-encrypted);
//   people-<L>-encrypted.key    that key as 128 hex digits and a newline;
//   people-<L>-copy.realm, people-<L>-encrypted-copy.realm
//                               each written again whole in streaming form (Group::write, as writeCopy does).
// <L> is N written short: 1000000 -> 1m, 250000 -> 250k, 1234 -> 1234.
//
// Object-store conventions followed (realm-core src/realm/object-store/object_store.cpp): tables named
// `class_<Name>`, the primary key made by Group::add_table_with_primary_key, non-nullable scalars and
// strings (Swift's Int/String/Double/Bool), the `metadata` table with one `version` row, in-Realm history
// (make_in_realm_history) and Durability::Full as the SDKs open a local Realm. Three commits, as an app
// would make them: the schema, the people, the dogs.
//
// After writing, each file is opened again (a new DB) and its figures printed -- counts, sum(age),
// count(age > 50), count(city == "Zürich"), dogs with an owner -- so the reader's answers can be compared.
// The lock file and the .management/.note files Realm Core leaves beside the file are removed at the end, so
// OUTDIR holds only the .realm files (as a file copied off a device usually arrives).

#include <realm/db.hpp>
#include <realm/group.hpp>
#include <realm/history.hpp>
#include <realm/query.hpp>
#include <realm/table.hpp>
#include <realm/transaction.hpp>
#include <realm/version.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace realm;

// ---------------------------------------------------------------------------------------------------
// The data, as realm-bench makes it (Sources/realm-bench/BenchTarget.swift, BenchMain.swift)

struct SplitMix64 {
    uint64_t state;
    explicit SplitMix64(uint64_t seed)
        : state(seed)
    {
    }
    static uint64_t mix(uint64_t z)
    {
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    uint64_t next()
    {
        state += 0x9E3779B97F4A7C15ull;
        return mix(state);
    }
};

static const char* const kCities[100] = {
    "Amsterdam", "Athens", "Auckland", "Bangkok", "Barcelona",
    "Beijing", "Berlin", "Bogot\u00E1", "Boston", "Brussels",
    "Budapest", "Buenos Aires", "Cairo", "Cape Town", "Chicago",
    "Copenhagen", "Dallas", "Delhi", "Denver", "Dubai",
    "Dublin", "D\u00FCsseldorf", "Edinburgh", "Frankfurt", "Geneva",
    "Gothenburg", "Hamburg", "Hanoi", "Helsinki", "Hong Kong",
    "Houston", "Istanbul", "Jakarta", "Johannesburg", "Karachi",
    "Krak\u00F3w", "Kyiv", "Lagos", "Lima", "Lisbon",
    "London", "Los Angeles", "Lyon", "Madrid", "Malm\u00F6",
    "Manila", "Marseille", "Melbourne", "Mexico City", "Miami",
    "Milan", "Montr\u00E9al", "Moscow", "Mumbai", "Munich",
    "Nairobi", "Naples", "New York", "Nice", "Oslo",
    "Paris", "Perth", "Philadelphia", "Porto", "Prague",
    "Reykjav\u00EDk", "Riga", "Rio de Janeiro", "Rome", "Santiago",
    "S\u00E3o Paulo", "Seattle", "Seoul", "Shanghai", "Singapore",
    "Stockholm", "Sydney", "Taipei", "Tallinn", "Tel Aviv",
    "Toronto", "Valencia", "Vancouver", "Vienna", "Vilnius",
    "Warsaw", "Washington", "Wellington", "Z\u00FCrich", "\u6771\u4EAC",
    "\u5927\u962A", "\u4EAC\u90FD", "\u5317\u4EAC", "\u4E0A\u6D77", "\uC11C\uC6B8",
    "\u041C\u043E\u0441\u043A\u0432\u0430", "\u0130zmir", "\u00C5rhus", "K\u00F6ln", "N\u00FCrnberg",
};
static const char* const kZurich = "Z\u00FCrich";
static const int64_t kNameCount = 50000;
static const uint64_t kSeed = 0x5EED0FBE7C4A1100ull;

struct Person {
    int64_t id;
    std::string name;
    const char* city;
    int64_t age;
    double score;
    bool active;
};

// BenchTarget.swift's `makePerson(id:)`: three draws of a generator seeded by the id.
static Person make_person(int64_t id)
{
    SplitMix64 rng(kSeed + uint64_t(id) * 3 * 0x9E3779B97F4A7C15ull);
    uint64_t a = rng.next(), b = rng.next(), c = rng.next();
    Person p;
    p.id = id;
    p.name = "name-" + std::to_string(id % kNameCount);
    p.city = kCities[b % 100];
    p.age = int64_t(a % 100);
    p.score = double(c >> 11) * 0x1p-53 * 1000;
    p.active = (a >> 63) == 1;
    return p;
}

// ---------------------------------------------------------------------------------------------------

static double now_ms()
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static std::string short_count(int64_t n)
{
    if (n >= 1000000 && n % 1000000 == 0)
        return std::to_string(n / 1000000) + "m";
    if (n >= 1000 && n % 1000 == 0)
        return std::to_string(n / 1000) + "k";
    return std::to_string(n);
}

static int64_t file_size(const std::string& path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? int64_t(st.st_size) : -1;
}

static void write_realm(const std::string& path, int64_t n, const char* key, const std::string& copy_path)
{
    // Replace an earlier run's file: the file itself, its lock file, its .management directory, its .note fifo.
    DB::delete_files(path, nullptr, /* delete_lockfile */ true);
    double t0 = now_ms();
    {
        auto hist = make_in_realm_history();
        DBOptions options(DBOptions::Durability::Full, key);
        DBRef db = DB::create(std::move(hist), path, options);

        // Commit 1: the schema, as ObjectStore::apply_schema_changes creates it for a new file.
        TableKey person_key, dog_key;
        ColKey c_id, c_name, c_city, c_age, c_score, c_active, d_name, d_owner;
        {
            auto wt = db->start_write();
            TableRef metadata = wt->get_or_add_table("metadata");
            ColKey version = metadata->add_column(type_Int, "version");
            metadata->create_object().set(version, int64_t(1));

            TableRef person = wt->add_table_with_primary_key("class_Person", type_Int, "id", /* nullable */ false);
            c_id = person->get_primary_key_column();
            c_name = person->add_column(type_String, "name");
            person->add_search_index(c_name);
            c_city = person->add_column(type_String, "city");
            c_age = person->add_column(type_Int, "age");
            c_score = person->add_column(type_Double, "score");
            c_active = person->add_column(type_Bool, "active");
            person_key = person->get_key();

            TableRef dog = wt->add_table("class_Dog");
            d_name = dog->add_column(type_String, "name");
            d_owner = dog->add_column(*person, "owner");
            dog_key = dog->get_key();
            wt->commit();
        }
        // Commit 2: the people.
        {
            auto wt = db->start_write();
            TableRef t = wt->get_table(person_key);
            for (int64_t id = 0; id < n; ++id) {
                Person p = make_person(id);
                Obj o = t->create_object_with_primary_key(Mixed(p.id));
                o.set(c_name, StringData(p.name));
                o.set(c_city, StringData(p.city));
                o.set(c_age, p.age);
                o.set(c_score, p.score);
                o.set(c_active, p.active);
            }
            wt->commit();
        }
        // Commit 3: the dogs, each owner found by its primary key.
        {
            auto wt = db->start_write();
            TableRef people = wt->get_table(person_key);
            TableRef t = wt->get_table(dog_key);
            int64_t dogs = std::max<int64_t>(1, n / 4);
            for (int64_t i = 0; i < dogs; ++i) {
                ObjKey owner = people->find_primary_key(Mixed(int64_t((uint64_t(i) * 7919) % uint64_t(n))));
                Obj d = t->create_object();
                d.set(d_name, StringData("dog-" + std::to_string(i)));
                if (owner)
                    d.set(d_owner, owner);
            }
            wt->commit();
        }
        db->close();
    }
    double written = now_ms() - t0;

    // Open it again, as a reader would, and print what it holds.
    {
        auto hist = make_in_realm_history();
        DBOptions options(DBOptions::Durability::Full, key);
        DBRef db = DB::create(std::move(hist), path, options);
        auto rt = db->start_read();
        ConstTableRef person = rt->get_table("class_Person");
        ConstTableRef dog = rt->get_table("class_Dog");
        ConstTableRef metadata = rt->get_table("metadata");
        if (!person || !dog || !metadata) {
            fprintf(stderr, "%s: a table is missing after writing\n", path.c_str());
            exit(1);
        }
        ColKey c_age = person->get_column_key("age"), c_city = person->get_column_key("city");
        ColKey d_owner = dog->get_column_key("owner");
        auto sum = person->where().sum(c_age);
        size_t over50 = person->where().greater(c_age, 50).count();
        size_t zurich = person->where().equal(c_city, StringData(kZurich)).count();
        size_t with_owner = 0;
        for (auto& d : *dog)
            if (!d.is_null(d_owner))
                ++with_owner;
        int64_t schema_version = metadata->get_object(0).get<int64_t>("version");
        printf("%s: %lld bytes, written in %.0f ms%s\n", path.c_str(), (long long)file_size(path), written,
               key ? " (encrypted)" : "");
        printf("  Realm Core %s, file format %d, schema version %lld\n", REALM_VERSION_STRING,
               Group::get_current_file_format_version(), (long long)schema_version);
        printf("  Person %zu, Dog %zu (with an owner: %zu)\n", person->size(), dog->size(), with_owner);
        printf("  sum(age) %lld, count(age > 50) %zu, count(city == \"%s\") %zu\n",
               (long long)(sum && !sum->is_null() ? sum->get_int() : 0), over50, kZurich, zurich);
        // The same version written whole, in streaming form (as Realm.writeCopy writes it), with the same key.
        std::filesystem::remove(copy_path);
        rt->write(copy_path, key);
        printf("  streaming copy: %s, %lld bytes\n", copy_path.c_str(), (long long)file_size(copy_path));
        rt = nullptr;
        db->close();
    }
    // Leave only the .realm file.
    for (auto type : {DB::CoreFileType::Lock, DB::CoreFileType::Note, DB::CoreFileType::Management}) {
        std::error_code ec;
        std::filesystem::remove_all(DB::get_core_file(path, type), ec);
    }
}

int main(int argc, char** argv)
{
    std::string outdir;
    int64_t n = 1000000;
    bool encrypted = true;
    int positional = 0;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--no-encrypted")
            encrypted = false;
        else if (!a.empty() && a[0] == '-')
            positional = 99;
        else if (positional == 0)
            outdir = a, positional = 1;
        else if (positional == 1)
            n = atoll(a.c_str()), positional = 2;
        else
            positional = 99;
    }
    if (outdir.empty() || positional > 2 || n < 1) {
        fprintf(stderr, "usage: realm_core_writer OUTDIR [N] [--no-encrypted]   (N >= 1, default 1000000)\n");
        return 2;
    }
    mkdir(outdir.c_str(), 0755);
    std::string base = outdir + "/people-" + short_count(n);

    write_realm(base + ".realm", n, nullptr, base + "-copy.realm");

    if (encrypted) {
        // A fixed key (the same every run), so the file and its key can be made again.
        char key[64];
        SplitMix64 rng(kSeed ^ 0xE7C8E7C8E7C8E7C8ull);
        for (int i = 0; i < 64; i += 8) {
            uint64_t v = rng.next();
            memcpy(key + i, &v, 8);
        }
        std::string key_path = base + "-encrypted.key";
        FILE* f = fopen(key_path.c_str(), "w");
        if (!f) {
            fprintf(stderr, "cannot write %s\n", key_path.c_str());
            return 1;
        }
        for (int i = 0; i < 64; ++i)
            fprintf(f, "%02x", (unsigned char)key[i]);
        fprintf(f, "\n");
        fclose(f);
        write_realm(base + "-encrypted.realm", n, key, base + "-encrypted-copy.realm");
        printf("  key: %s\n", key_path.c_str());
    }
    return 0;
}
