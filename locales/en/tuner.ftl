# The tuner-file card (src/ui/tuner_card.rs): a tuner file read as what it
# makes NCCL or HCCL run at each size, beside the model's recommendation.
# Chinese: ../zh/tuner.ftl (the same ids; tests/i18n.rs checks).

tn-title = Tuner file
tn-label = Tuner file: what it makes the library run at each size
tn-formats = NCCL tuner config · HCCL tuner plugin
tn-text = Tuner file text
tn-placeholder =
    allreduce,0,65536,tree,simple,-1,1,8
    allreduce,65537,18446744073709551615,ring,ll128,-1,1,8
    {"{"}"version": 1, "op_types": {"{"}…{"}"}{"}"}
tn-paste = Paste or drop a tuner file — NCCL's example tuner config (NCCL_TUNER_CONFIG_FILE), the performance CSV its scripts/optimize_config.py reads, or HCCL's tuner-plugin rules (HCCL_TUNER_CONFIG_FILE, JSON) — to see what it makes the library run at each size of the chart for this page's collective, ranks and machine, beside the model's recommendation.
tn-no-plan = The page has no plan to compare with yet.
tn-read = Read & compare
tn-read-title = Read the text above as a tuner file
tn-load = Load file…
tn-load-title = Read a .conf, .csv or .json file and show what it makes the library run
tn-unreadable = This file cannot be read:
tn-not-compared = This file cannot be compared here:
tn-source-nccl-config = NCCL example tuner config
tn-source-nccl-perf = NCCL tuner performance data, read as the config its optimizer writes
tn-source-hccl = HCCL tuner-plugin rules
tn-rules =
    { $n ->
        [one] 1 rule
       *[other] { $n } rules
    }, the first that matches wins
tn-lib-model = the model
tn-nodes =
    { $n ->
        [one] 1 node
       *[other] { $n } nodes
    }
tn-servers =
    { $n ->
        [one] 1 server
       *[other] { $n } servers
    }
tn-nodes-unknown = nodes unknown
tn-for = What it makes { $library } run for { $op } on { $ranks } ranks ({ $at }), { $dtype }, at each size of the chart:
tn-col-size = Size
tn-col-file = This file → { $library }
tn-col-model = Model recommends
tn-no-rule = no rule: { $library }'s own choice
tn-line = line { $line }
tn-channels =
    { $n ->
        [one] 1 channel
       *[other] { $n } channels
    }
tn-same = the same as the model's recommendation
tn-differs = differs from the model's recommendation
tn-any = any
tn-rule-title = line { $line }: { $bytes } bytes, ranks { $ranks }, nodes { $nodes }
tn-rule-title-hccl = line { $line }: { $bytes } bytes, ranks { $ranks }, servers { $nodes }
tn-summary =
    { $case ->
        [one-same] At the one size this file decides (of the chart's { $sizes }), it picks what the model recommends.
        [one-differs] At the one size this file decides (of the chart's { $sizes }), it picks something other than the model's recommendation.
        [same] At each of the { $matched } sizes this file decides (of the chart's { $sizes }), it picks what the model recommends.
        [all] At all { $matched } sizes this file decides (of the chart's { $sizes }), it picks something other than the model's recommendation.
       *[some] At { $differs } of the { $matched } sizes this file decides (of the chart's { $sizes }), it picks something other than the model's recommendation.
    }
tn-apart-hccl = HCCL's rules name an engine, an executor and a template; the model names an algorithm: the two are shown side by side, not compared.
tn-apart-library = This file is read by { $file }, but the page's machine ({ $topo }) runs { $machine }: the model's column is { $machine }'s choice there, shown beside, not compared.
tn-none-match = No rule of this file matches { $op } on { $ranks } ranks ({ $at }): { $library } makes its own choice at every size. The file has rules for:
tn-scope = { $op }: ranks { $ranks }, nodes { $nodes }
tn-scope-hccl = { $op }: ranks { $ranks }, servers { $nodes }
tn-pending = The model's recommendation is being made in the planner worker…
tn-model-failed = The model has no recommendation here:
tn-notes =
    { $n ->
        [one] 1 note from reading the file
       *[other] { $n } notes from reading the file
    }
